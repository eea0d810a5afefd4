package automation

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/catalog"
	"github.com/telcoplatform/platform/models/eventlog"
	"github.com/telcoplatform/platform/models/operations"
	"github.com/telcoplatform/platform/models/services"
)

// Orchestration operation types: a run of an orchestration's steps, and the
// standing operation of an event-triggered orchestration (its items are its runs).
const (
	OpTypeOrchestration        operations.OperationType = "orchestration"
	OpTypeOrchestrationTrigger operations.OperationType = "orchestration_trigger"
)

// Triggers (DECISIONS 5): manual runs the steps at once; event:<name> runs
// them each time that event occurs in the organization.
const (
	TriggerManual      = "manual"
	TriggerEventPrefix = "event:"
)

// Bounds of orchestrations.
const (
	MaxOrchestrationSteps = 50
	MaxWait               = 30 * 24 * time.Hour
	maxNotifyMessage      = 2000
	// MaxTriggerDepth stops event-triggered runs from triggering each other
	// forever: an event written by a run that was itself triggered this many
	// levels deep starts no further run.
	MaxTriggerDepth = 3
	// MaxTriggerRunsListed is how many of an event trigger's latest runs its
	// operation lists in items.
	MaxTriggerRunsListed = 100
)

// Orchestration actions: what a step does (docs/bulk-and-orchestration.md).
const (
	ActionProvisionService     = "provision_service"
	ActionModifyService        = "modify_service"
	ActionScaleService         = "scale_service"
	ActionSuspendService       = "suspend_service"
	ActionResumeService        = "resume_service"
	ActionRunAvailabilityCheck = "run_availability_check"
	ActionNotify               = "notify"
	ActionWait                 = "wait"
)

// ParamSpec describes one parameter of an action.
type ParamSpec struct {
	Name     string
	Kind     string // string, string_list, object, duration
	Required bool
	Fields   []string // object: the keys it may hold
}

// StepPrincipalCan reports whether p may run a step of action (its
// ActionSpec's permission). Errors: INSUFFICIENT_PERMISSIONS, VALIDATION_ERROR (unknown action).
func StepPrincipalCan(p *models.Principal, step OrchestrationStep) error {
	spec, ok := LookupAction(step.Action)
	if !ok {
		return models.Errorf(models.CodeValidation, "step %d: unknown action %q", step.Order, step.Action)
	}
	if spec.Permission != "" && !p.Can(spec.Permission) {
		return models.Errorf(models.CodeInsufficientPermissions, "step %d (%s) needs permission %s, which the orchestration's creator did not hold", step.Order, step.Action, spec.Permission).
			WithDetail("required_permission", spec.Permission)
	}
	return nil
}

// ActionSpec describes an orchestration action: its parameters, the
// outputs that later steps may reference as ${steps.<order>.<output>}, and
// the permission a step of it needs (checked against the creator's
// permissions when the orchestration is created and again when the step runs).
type ActionSpec struct {
	Name       string
	Params     []ParamSpec
	Outputs    []string
	Permission string // "" for none (wait)
}

// OrchestrationActions returns every action a step may name.
func OrchestrationActions() []ActionSpec {
	return []ActionSpec{
		{ActionProvisionService, []ParamSpec{
			{Name: "template", Kind: "string", Required: true},
			{Name: "location", Kind: "string", Required: true},
			{Name: "customizations", Kind: "object", Fields: []string{"bandwidth", "redundancy", "monitoring"}},
			{Name: "account_id", Kind: "string"},
		}, []string{"service_id", "request_id", "status"}, "services:write"},
		{ActionModifyService, []ParamSpec{
			{Name: "service_id", Kind: "string", Required: true},
			{Name: "changes", Kind: "object", Required: true, Fields: []string{"name", "sla", "bandwidth", "redundancy", "monitoring"}},
		}, []string{"service_id", "request_id", "status"}, "services:write"},
		{ActionScaleService, []ParamSpec{
			{Name: "service_id", Kind: "string", Required: true},
			{Name: "scaling_action", Kind: "string", Required: true},
			{Name: "new_bandwidth", Kind: "string"},
			{Name: "new_quantity", Kind: "integer"},
			{Name: "effective_date", Kind: "string"},
			{Name: "maintenance_window", Kind: "object", Fields: []string{"start", "duration"}},
		}, []string{"service_id", "request_id", "status"}, "services:write"},
		{ActionSuspendService, []ParamSpec{{Name: "service_id", Kind: "string", Required: true}}, []string{"service_id", "status"}, "services:write"},
		{ActionResumeService, []ParamSpec{{Name: "service_id", Kind: "string", Required: true}}, []string{"service_id", "status"}, "services:write"},
		{ActionRunAvailabilityCheck, []ParamSpec{
			{Name: "location", Kind: "string", Required: true},
			{Name: "service_types", Kind: "string_list"},
			{Name: "bandwidth", Kind: "string"},
		}, []string{"location_id", "available", "service_types"}, "services:read"},
		{ActionNotify, []ParamSpec{
			{Name: "event", Kind: "string", Required: true},
			{Name: "message", Kind: "string", Required: true},
			{Name: "service_id", Kind: "string"},
		}, []string{"event_id", "event"}, "services:write"},
		{ActionWait, []ParamSpec{{Name: "duration", Kind: "duration"}, {Name: "until", Kind: "string"}}, []string{"until"}, ""},
	}
}

// LookupAction returns the action named name.
func LookupAction(name string) (ActionSpec, bool) {
	for _, a := range OrchestrationActions() {
		if a.Name == name {
			return a, true
		}
	}
	return ActionSpec{}, false
}

func actionNames() []string {
	var out []string
	for _, a := range OrchestrationActions() {
		out = append(out, a.Name)
	}
	return out
}

// triggerEvents returns the canonical event names that a trigger may name
// (DECISIONS 9).
func triggerEvents() []string {
	return []string{
		"service.provisioned", "service.modified", "service.down", "service.restored", "service.performance_alert",
		"service.maintenance_scheduled", "service.decommissioned", "service.status_changed",
		"invoice.created", "invoice.paid", "invoice.overdue", "invoice.cancelled", "invoice.disputed", "payment.successful", "payment.failed",
		"subscription.created", "subscription.cancelled", "usage.threshold",
		"ticket.created", "ticket.updated", "ticket.resolved", "ticket.escalated", "comment.added", "sla.breach",
	}
}

// TriggerEvents returns the event names that `event:<name>` accepts.
func TriggerEvents() []string { return triggerEvents() }

// notifyEvents returns the events a notify step may write: the services
// area's, except the lifecycle facts that only the platform asserts.
func notifyEvents() []string {
	return []string{"service.modified", "service.down", "service.restored", "service.performance_alert",
		"service.maintenance_scheduled", "service.status_changed"}
}

// ParseTrigger returns the event type of a trigger ("" for manual; an empty
// trigger is manual). Errors: VALIDATION_ERROR (field trigger).
func ParseTrigger(trigger string) (string, error) {
	trigger = strings.TrimSpace(trigger)
	if trigger == "" || trigger == TriggerManual {
		return "", nil
	}
	if name, ok := strings.CutPrefix(trigger, TriggerEventPrefix); ok {
		if aliases := map[string]string{"invoice.generated": "invoice.created", "payment.received": "payment.successful"}; aliases[name] != "" {
			name = aliases[name]
		}
		if slices.Contains(triggerEvents(), name) {
			return name, nil
		}
		return "", models.Invalid(models.FieldIssue{Field: "trigger", Issue: fmt.Sprintf("unknown event %q: event:<name> takes a canonical event name such as event:service.provisioned", name)})
	}
	return "", models.Invalid(models.FieldIssue{Field: "trigger", Issue: `must be "manual" or "event:<event name>", e.g. event:service.provisioned`})
}

// OrchestrationStep is one step of an orchestration (spec 2.2).
type OrchestrationStep struct {
	Order      int            `json:"order"`
	Action     string         `json:"action"`
	Parameters map[string]any `json:"parameters"`
	DependsOn  []int          `json:"depends_on"`
}

// StepName returns the name of step st in the operation's steps: "<order>:<action>".
func StepName(st OrchestrationStep) string { return strconv.Itoa(st.Order) + ":" + st.Action }

// OrchestrationDefinition is a stored orchestration (wf_): its steps and its
// trigger. A manual one runs once, as the operation with its own id; an
// event-triggered one is a standing operation (with its own id) whose runs
// are operations of their own.
type OrchestrationDefinition struct {
	ID string `gorm:"primaryKey;size:64"`
	models.Tenant
	Name      string              `gorm:"size:200;not null"`
	Trigger   string              `gorm:"size:80;not null"`
	EventType string              `gorm:"size:60;index"`
	Steps     []OrchestrationStep `gorm:"serializer:json;type:text"`
	Active    bool                `gorm:"not null;default:false;index"`
	Runs      int                 `gorm:"not null;default:0"`
	CreatedBy string              `gorm:"size:40"`
	// CreatorPermissions are the creator's permissions at creation: every
	// run's steps act with them, never more.
	CreatorPermissions []string `gorm:"serializer:json;type:text"`
	CreatedAt          time.Time
	UpdatedAt          time.Time
}

// OrchestrationInput is an orchestration as a client sends it.
type OrchestrationInput struct {
	Name    string
	Trigger string
	Steps   []OrchestrationStep
}

var refPattern = regexp.MustCompile(`\$\{([^}]*)\}`)

// stepRef is a reference ${steps.<order>.<output>} or ${event.<path>}.
type stepRef struct {
	step   int
	output string
	event  string
}

func parseRef(expr string) (stepRef, bool) {
	parts := strings.Split(expr, ".")
	switch {
	case len(parts) == 3 && parts[0] == "steps":
		n, err := strconv.Atoi(parts[1])
		if err != nil || parts[2] == "" {
			return stepRef{}, false
		}
		return stepRef{step: n, output: parts[2]}, true
	case len(parts) >= 2 && parts[0] == "event":
		switch parts[1] {
		case "id", "type", "resource_id":
			if len(parts) == 2 {
				return stepRef{event: expr}, true
			}
		case "data":
			for _, p := range parts[2:] {
				if p == "" {
					return stepRef{}, false
				}
			}
			return stepRef{event: expr}, true
		}
	}
	return stepRef{}, false
}

// refsIn returns the references in a parameter value (strings, lists and
// objects are searched) and whether every ${...} in it is well formed.
func refsIn(v any) ([]stepRef, bool) {
	var out []stepRef
	ok := true
	switch x := v.(type) {
	case string:
		for _, m := range refPattern.FindAllStringSubmatch(x, -1) {
			r, good := parseRef(m[1])
			if !good {
				ok = false
				continue
			}
			out = append(out, r)
		}
	case []any:
		for _, e := range x {
			r, good := refsIn(e)
			out, ok = append(out, r...), ok && good
		}
	case map[string]any:
		for _, e := range x {
			r, good := refsIn(e)
			out, ok = append(out, r...), ok && good
		}
	}
	return out, ok
}

func hasRef(v any) bool {
	s, ok := v.(string)
	return ok && refPattern.MatchString(s)
}

// ValidateOrchestration checks an orchestration for principal p and returns
// it normalised (steps sorted by order, event type parsed): a name (at most
// 200 characters), a trigger (manual or event:<canonical event>), 1 to 50
// steps with distinct positive orders, known actions, dependencies that
// exist and form no cycle, parameters each action accepts with valid values,
// and references ${steps.<n>.<output>} only to steps it depends on
// (directly or not) and outputs their action has; ${event....} only with an
// event trigger. Literal template, location and service ids are checked
// against the catalog and the caller's services.
// Errors: VALIDATION_ERROR (fields named steps[i]...).
func (s *Store) ValidateOrchestration(ctx context.Context, p *models.Principal, in OrchestrationInput) (*OrchestrationDefinition, error) {
	var v models.Validator
	def := &OrchestrationDefinition{Name: strings.TrimSpace(in.Name), Trigger: strings.TrimSpace(in.Trigger),
		CreatorPermissions: slices.Clone(p.Permissions)}
	if def.CreatorPermissions == nil {
		def.CreatorPermissions = []string{}
	}
	if def.Trigger == "" {
		def.Trigger = TriggerManual
	}
	v.Check(def.Name != "" && len(def.Name) <= 200, "name", "is required, at most 200 characters")
	eventType, err := ParseTrigger(def.Trigger)
	if err != nil {
		v.Add("trigger", models.AsError(err).Details["fields"].([]models.FieldIssue)[0].Issue)
	}
	def.EventType = eventType
	if eventType != "" {
		def.Trigger = TriggerEventPrefix + eventType
	}
	v.Check(len(in.Steps) > 0, "steps", "must list at least one step")
	v.Check(len(in.Steps) <= MaxOrchestrationSteps, "steps", fmt.Sprintf("must list at most %d steps", MaxOrchestrationSteps))
	if err := v.Err(); err != nil {
		return nil, err
	}

	index := map[int]int{} // order → position in in.Steps
	for i, st := range in.Steps {
		f := fmt.Sprintf("steps[%d]", i)
		v.Check(st.Order >= 1 && st.Order <= 10000, f+".order", "must be a positive integer (at most 10000)")
		if _, dup := index[st.Order]; dup {
			v.Add(f+".order", fmt.Sprintf("order %d is used by another step", st.Order))
		} else {
			index[st.Order] = i
		}
		if spec, ok := LookupAction(st.Action); !ok {
			v.Add(f+".action", fmt.Sprintf("unknown action %q: use one of %s", st.Action, strings.Join(actionNames(), ", ")))
		} else if spec.Permission != "" && !p.Can(spec.Permission) {
			return nil, models.Errorf(models.CodeInsufficientPermissions, "step %d (%s) needs permission %s, which this credential lacks", st.Order, st.Action, spec.Permission).
				WithDetail("required_permission", spec.Permission)
		}
	}
	for i, st := range in.Steps {
		f := fmt.Sprintf("steps[%d].depends_on", i)
		seen := map[int]bool{}
		for j, d := range st.DependsOn {
			switch _, ok := index[d]; {
			case d == st.Order:
				v.Add(fmt.Sprintf("%s[%d]", f, j), "a step cannot depend on itself")
			case !ok:
				v.Add(fmt.Sprintf("%s[%d]", f, j), fmt.Sprintf("no step has order %d", d))
			case seen[d]:
				v.Add(fmt.Sprintf("%s[%d]", f, j), fmt.Sprintf("step %d is listed twice", d))
			}
			seen[d] = true
		}
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	if cycle := findCycle(in.Steps); len(cycle) > 0 {
		parts := make([]string, len(cycle))
		for i, o := range cycle {
			parts[i] = strconv.Itoa(o)
		}
		return nil, models.Invalid(models.FieldIssue{Field: "steps", Issue: "the dependencies form a cycle: " + strings.Join(parts, " → ")})
	}
	ancestors := Ancestors(in.Steps)
	steps := make([]OrchestrationStep, len(in.Steps))
	for i, st := range in.Steps {
		if st.Parameters == nil {
			st.Parameters = map[string]any{}
		}
		if st.DependsOn == nil {
			st.DependsOn = []int{}
		}
		sort.Ints(st.DependsOn)
		f := fmt.Sprintf("steps[%d].parameters", i)
		refs, ok := refsIn(st.Parameters)
		v.Check(ok, f, "has a malformed reference: use ${steps.<order>.<output>} or ${event.id|type|resource_id|data.<path>}")
		for _, r := range refs {
			switch {
			case r.event != "":
				v.Check(eventType != "", f, fmt.Sprintf("${%s} needs an event trigger", r.event))
			case !ancestors[st.Order][r.step]:
				v.Add(f, fmt.Sprintf("${steps.%d.%s}: step %d must be one this step depends on (directly or through others)", r.step, r.output, r.step))
			default:
				spec, _ := LookupAction(in.Steps[index[r.step]].Action)
				v.Check(slices.Contains(spec.Outputs, r.output), f,
					fmt.Sprintf("${steps.%d.%s}: %s outputs %s", r.step, r.output, spec.Name, strings.Join(spec.Outputs, ", ")))
			}
		}
		if err := s.checkStepParameters(ctx, p, &v, f, st); err != nil {
			return nil, err
		}
		steps[i] = st
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	sort.Slice(steps, func(a, b int) bool { return steps[a].Order < steps[b].Order })
	def.Steps = steps
	return def, nil
}

// checkStepParameters records the issues of one step's parameters under
// field f. Values holding references are checked when the step runs.
func (s *Store) checkStepParameters(ctx context.Context, p *models.Principal, v *models.Validator, f string, st OrchestrationStep) error {
	spec, _ := LookupAction(st.Action)
	known := map[string]ParamSpec{}
	for _, ps := range spec.Params {
		known[ps.Name] = ps
	}
	for name, val := range st.Parameters {
		ps, ok := known[name]
		if !ok {
			v.Add(f+"."+name, fmt.Sprintf("is not a parameter of %s", st.Action))
			continue
		}
		switch ps.Kind {
		case "string", "duration":
			sv, isStr := val.(string)
			v.Check(isStr && len(sv) <= 2000, f+"."+name, "must be a string (at most 2000 characters)")
		case "integer":
			n, isNum := val.(float64)
			if i, isInt := val.(int); isInt {
				n, isNum = float64(i), true
			}
			v.Check(isNum && n == float64(int(n)) && n >= 0, f+"."+name, "must be a non-negative integer")
		case "string_list":
			list, isList := val.([]any)
			good := isList && len(list) <= 20
			for _, e := range list {
				_, isStr := e.(string)
				good = good && isStr
			}
			v.Check(good, f+"."+name, "must be a list of at most 20 strings")
		case "object":
			obj, isObj := val.(map[string]any)
			if !isObj {
				v.Add(f+"."+name, "must be an object")
				continue
			}
			for k, e := range obj {
				_, isStr := e.(string)
				v.Check(slices.Contains(ps.Fields, k), f+"."+name+"."+k, "is not one of "+strings.Join(ps.Fields, ", "))
				v.Check(isStr, f+"."+name+"."+k, "must be a string")
			}
		}
	}
	for _, ps := range spec.Params {
		if _, ok := st.Parameters[ps.Name]; ps.Required && !ok {
			v.Add(f+"."+ps.Name, "is required")
		}
	}
	str := func(name string) (string, bool) {
		val, ok := st.Parameters[name].(string)
		return strings.TrimSpace(val), ok && !hasRef(val)
	}
	obj := func(name string) map[string]string {
		out := map[string]string{}
		m, _ := st.Parameters[name].(map[string]any)
		for k, e := range m {
			if sv, ok := e.(string); ok && !hasRef(sv) {
				out[k] = strings.TrimSpace(sv)
			}
		}
		return out
	}
	env := p.Environment
	switch st.Action {
	case ActionProvisionService:
		if t, ok := str("template"); ok {
			if _, err := s.catalog.Template(ctx, env, t); err != nil {
				if models.ErrorCode(err) != models.CodeValidation {
					return err
				}
				v.Add(f+".template", fmt.Sprintf("no provisioning template %q", t))
			}
		}
		if loc, ok := str("location"); ok {
			if id, _, err := ParseLocation(f+".location", loc); err != nil {
				v.Add(f+".location", models.AsError(err).Details["fields"].([]models.FieldIssue)[0].Issue)
			} else if id != "" {
				if _, err := s.catalog.LocationByID(ctx, env, f+".location", id); err != nil {
					if models.ErrorCode(err) != models.CodeValidation {
						return err
					}
					v.Add(f+".location", fmt.Sprintf("no serviceable location %q", id))
				}
			}
		}
		c := obj("customizations")
		if b := c["bandwidth"]; b != "" {
			_, issue := catalog.CheckBandwidth(b)
			v.Check(issue == "", f+".customizations.bandwidth", issue)
		}
		if r := c["redundancy"]; r != "" {
			v.Check(slices.Contains(services.RedundancyValues, r), f+".customizations.redundancy", "must be one of "+strings.Join(services.RedundancyValues, ", "))
		}
		if m := c["monitoring"]; m != "" {
			v.Check(slices.Contains(services.MonitoringValues, m), f+".customizations.monitoring", "must be one of "+strings.Join(services.MonitoringValues, ", "))
		}
		if a, ok := str("account_id"); ok && a != "" {
			v.Check(models.HasPrefix(a, models.PrefixAccount), f+".account_id", "must be a billing account id (acct_...)")
		}
	case ActionModifyService, ActionScaleService, ActionSuspendService, ActionResumeService:
		id, literal := str("service_id")
		if literal {
			if _, err := s.services.ServiceIn(ctx, p.Scope(), id); err != nil {
				if models.ErrorCode(err) != models.CodeNotFound {
					return err
				}
				v.Add(f+".service_id", fmt.Sprintf("no service %q", id))
				literal = false
			}
		}
		if st.Action != ActionModifyService && st.Action != ActionScaleService {
			break
		}
		in, complete, err := StepUpdateInput(st.Action, st.Parameters)
		if err != nil {
			for _, fi := range models.AsError(err).Details["fields"].([]models.FieldIssue) {
				v.Add(f+"."+fi.Field, fi.Issue)
			}
			break
		}
		if !literal || !complete {
			break // checked when the step runs
		}
		if _, _, _, err := s.services.PrepareServiceUpdate(ctx, p, id, in); err != nil && !noChange(err) {
			e := models.AsError(err)
			if e.Code == models.CodeValidation {
				prefix := f + ".changes."
				if st.Action == ActionScaleService {
					prefix = f + "."
				}
				for _, fi := range e.Details["fields"].([]models.FieldIssue) {
					v.Add(prefix+strings.TrimPrefix(fi.Field, "configuration."), fi.Issue)
				}
			} else if e.Code == models.CodeInternal {
				return err
			}
		}
	case ActionRunAvailabilityCheck:
		if loc, ok := str("location"); ok {
			if _, _, err := ParseLocation(f+".location", loc); err != nil {
				v.Add(f+".location", models.AsError(err).Details["fields"].([]models.FieldIssue)[0].Issue)
			}
		}
		if list, ok := st.Parameters["service_types"].([]any); ok {
			for j, e := range list {
				if name, isStr := e.(string); isStr && !hasRef(name) {
					_, known := catalog.LookupServiceType(name)
					v.Check(known, fmt.Sprintf("%s.service_types[%d]", f, j), "must be one of "+strings.Join(catalog.ServiceTypeNames(""), ", "))
				}
			}
		}
		if b, ok := str("bandwidth"); ok && b != "" {
			_, issue := catalog.CheckBandwidth(b)
			v.Check(issue == "", f+".bandwidth", issue)
		}
	case ActionNotify:
		if e, ok := str("event"); ok {
			v.Check(slices.Contains(notifyEvents(), e), f+".event", "must be one of "+strings.Join(notifyEvents(), ", "))
		}
		if m, ok := st.Parameters["message"].(string); ok {
			v.Check(strings.TrimSpace(m) != "" && len(m) <= maxNotifyMessage, f+".message", fmt.Sprintf("must be 1 to %d characters", maxNotifyMessage))
		}
	case ActionWait:
		d, hasD := st.Parameters["duration"]
		u, hasU := st.Parameters["until"]
		v.Check(hasD != hasU, f, "wait takes either duration (e.g. 30s, 15m, 2h) or until (an RFC 3339 time)")
		if ds, ok := d.(string); ok && hasD && !hasRef(ds) {
			if _, err := ParseWait(ds); err != nil {
				v.Add(f+".duration", err.Error())
			}
		}
		if us, ok := u.(string); ok && hasU && !hasRef(us) {
			t, err := time.Parse(time.RFC3339, us)
			v.Check(err == nil && !t.After(s.Now().Add(MaxWait)), f+".until", "must be an RFC 3339 time within 30 days")
		}
	}
	return nil
}

// ParseWait parses a wait duration: a positive Go duration (30s, 15m, 2h,
// 1h30m) of at most 30 days. Errors: a plain error saying why.
func ParseWait(s string) (time.Duration, error) {
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil || d <= 0 || d > MaxWait {
		return 0, errors.New("must be a positive duration of at most 30 days, e.g. 30s, 15m, 2h or 1h30m")
	}
	return d, nil
}

// findCycle returns the orders of a dependency cycle among steps, or nil.
func findCycle(steps []OrchestrationStep) []int {
	deps := map[int][]int{}
	for _, st := range steps {
		deps[st.Order] = st.DependsOn
	}
	const (
		unvisited = iota
		visiting
		done
	)
	state := map[int]int{}
	var stack []int
	var visit func(o int) []int
	visit = func(o int) []int {
		state[o] = visiting
		stack = append(stack, o)
		for _, d := range deps[o] {
			switch state[d] {
			case visiting:
				i := slices.Index(stack, d)
				return append(slices.Clone(stack[i:]), d)
			case unvisited:
				if c := visit(d); c != nil {
					return c
				}
			}
		}
		stack = stack[:len(stack)-1]
		state[o] = done
		return nil
	}
	orders := make([]int, 0, len(steps))
	for _, st := range steps {
		orders = append(orders, st.Order)
	}
	sort.Ints(orders)
	for _, o := range orders {
		if state[o] == unvisited {
			if c := visit(o); c != nil {
				return c
			}
		}
	}
	return nil
}

// Ancestors returns, for each step's order, the orders of every step it
// depends on directly or through others (steps must form no cycle).
func Ancestors(steps []OrchestrationStep) map[int]map[int]bool {
	deps := map[int][]int{}
	for _, st := range steps {
		deps[st.Order] = st.DependsOn
	}
	out := map[int]map[int]bool{}
	var walk func(o int) map[int]bool
	walk = func(o int) map[int]bool {
		if a, ok := out[o]; ok {
			return a
		}
		a := map[int]bool{}
		out[o] = a
		for _, d := range deps[o] {
			a[d] = true
			for x := range walk(d) {
				a[x] = true
			}
		}
		return a
	}
	for _, st := range steps {
		walk(st.Order)
	}
	return out
}

// ResolveParameters returns params with each reference replaced: a string
// that is exactly one reference takes the referenced value (any type);
// references inside longer strings are replaced by their text. outputs holds
// each finished step's outputs by order; event is the triggering event
// ({id, type, resource_id, data}) or nil. Errors: VALIDATION_ERROR naming
// the reference that has no value.
func ResolveParameters(params map[string]any, outputs map[int]map[string]any, event map[string]any) (map[string]any, error) {
	var firstErr error
	lookup := func(expr string) (any, bool) {
		r, ok := parseRef(expr)
		if !ok {
			return nil, false
		}
		if r.event != "" {
			var cur any = event
			for _, p := range strings.Split(r.event, ".")[1:] {
				m, ok := cur.(map[string]any)
				if !ok {
					return nil, false
				}
				if cur, ok = m[p]; !ok {
					return nil, false
				}
			}
			return cur, cur != nil
		}
		val, ok := outputs[r.step][r.output]
		return val, ok && val != nil
	}
	var resolve func(v any) any
	resolve = func(v any) any {
		switch x := v.(type) {
		case string:
			if m := refPattern.FindStringSubmatch(x); m != nil && m[0] == x {
				val, ok := lookup(m[1])
				if !ok && firstErr == nil {
					firstErr = models.Invalid(models.FieldIssue{Field: "parameters", Issue: fmt.Sprintf("${%s} has no value", m[1])})
				}
				return val
			}
			return refPattern.ReplaceAllStringFunc(x, func(ref string) string {
				val, ok := lookup(ref[2 : len(ref)-1])
				if !ok && firstErr == nil {
					firstErr = models.Invalid(models.FieldIssue{Field: "parameters", Issue: fmt.Sprintf("%s has no value", ref)})
				}
				if val == nil {
					return ""
				}
				return fmt.Sprint(val)
			})
		case []any:
			out := make([]any, len(x))
			for i, e := range x {
				out[i] = resolve(e)
			}
			return out
		case map[string]any:
			// Keys in order: the first unresolved reference named in the
			// error is the same on every run (workflows replay this).
			out := make(map[string]any, len(x))
			keys := slices.Sorted(maps.Keys(x)) //workflowcheck:ignore
			for _, k := range keys {
				out[k] = resolve(x[k])
			}
			return out
		}
		return v
	}
	out := resolve(params).(map[string]any)
	return out, firstErr
}

// DerivedID returns an identifier with prefix whose random part is derived
// from seed: the same seed gives the same id (idempotent creation from a
// retried activity or a redelivered event).
func DerivedID(prefix, seed string) string {
	sum := sha256.Sum256([]byte(seed))
	out := make([]byte, 20)
	for i := range out {
		out[i] = models.Base62[int(sum[i])%62]
	}
	return prefix + "_" + string(out)
}

// orchestrationSteps returns the operation steps of a run of def.
func orchestrationSteps(def *OrchestrationDefinition) []string {
	names := make([]string, len(def.Steps))
	for i, st := range def.Steps {
		names[i] = StepName(st)
	}
	return names
}

// CreateOrchestration stores a validated orchestration under id (wf_) and,
// in the same transaction, its operation with the same id: for a manual
// trigger the run (type orchestration, one step per step), for an event
// trigger the standing operation (type orchestration_trigger, whose items
// will be its runs). The definition of an event trigger is active.
func (s *Store) CreateOrchestration(ctx context.Context, scope models.Scope, def *OrchestrationDefinition, id, createdBy string) (*operations.Operation, error) {
	def.ID, def.CreatedBy, def.Active = id, createdBy, def.EventType != ""
	input := map[string]any{"name": def.Name, "trigger": def.Trigger, "steps": def.Steps}
	var op *operations.Operation
	if def.EventType == "" {
		op = operations.NewOperation(id, OpTypeOrchestration, id, createdBy, orchestrationSteps(def), input)
	} else {
		op = operations.NewOperation(id, OpTypeOrchestrationTrigger, id, createdBy, nil, input)
		op.Steps = []operations.OperationStep{}
	}
	err := s.Tx(ctx, scope, func(tx *gorm.DB) error {
		if err := tx.Create(def).Error; err != nil {
			return err
		}
		return tx.Create(op).Error
	})
	if err != nil {
		return nil, models.DBErr(err)
	}
	return op, nil
}

// OrchestrationIn returns the orchestration id in scope. Errors: NOT_FOUND.
func (s *Store) OrchestrationIn(ctx context.Context, scope models.Scope, id string) (*OrchestrationDefinition, error) {
	var def OrchestrationDefinition
	err := s.In(ctx, scope).Where("id = ?", id).Take(&def).Error
	return &def, models.NotFoundOr(err, "orchestration workflow")
}

// GetOrchestration returns an orchestration operation visible to p (a run,
// or an event trigger's standing operation) and its definition.
// Errors: NOT_FOUND (also for operations that are not orchestrations),
// INSUFFICIENT_PERMISSIONS.
func (s *Store) GetOrchestration(ctx context.Context, p *models.Principal, id string) (*operations.Operation, *OrchestrationDefinition, error) {
	op, err := s.operations.GetOperation(ctx, p, id)
	if err != nil {
		return nil, nil, err
	}
	if op.Type != OpTypeOrchestration && op.Type != OpTypeOrchestrationTrigger {
		return nil, nil, models.NotFound("orchestration workflow")
	}
	defID := op.ID
	if d, ok := op.Input["definition_id"].(string); ok && d != "" {
		defID = d
	}
	def, err := s.OrchestrationIn(ctx, models.TenantScope(op.OrganizationID, op.Environment), defID)
	if err != nil {
		return nil, nil, err
	}
	return op, def, nil
}

// OrchestrationsTriggeredBy returns the active orchestrations of scope (an
// organization and environment) whose trigger is event:<eventType>, oldest first.
func (s *Store) OrchestrationsTriggeredBy(ctx context.Context, scope models.Scope, eventType string) ([]OrchestrationDefinition, error) {
	var out []OrchestrationDefinition
	err := s.In(ctx, scope).Where("event_type = ? AND active = ?", eventType, true).Order("created_at, id").Find(&out).Error
	return out, models.DBErr(err)
}

// TriggerEvent is the event that starts a triggered run, as its steps see it
// through ${event....}.
type TriggerEvent struct {
	ID         string         `json:"id"`
	Type       string         `json:"type"`
	ResourceID string         `json:"resource_id"`
	Data       map[string]any `json:"data"`
}

// Map returns the event as ${event....} references see it.
func (e TriggerEvent) Map() map[string]any {
	return map[string]any{"id": e.ID, "type": e.Type, "resource_id": e.ResourceID, "data": e.Data}
}

// TriggerDepth returns how deep in a chain of triggered runs an event was
// written: 0 for events not written by an orchestration run.
func TriggerDepth(data map[string]any) int {
	o, _ := data["orchestration"].(map[string]any)
	switch d := o["depth"].(type) {
	case int:
		return d
	case float64:
		return int(d)
	}
	return 0
}

// EventTriggerDepth returns how deep in a chain of triggered runs the event
// with data was written: the depth its data carries (events of notify
// steps), or that of the operation named by its data.request_id (a run, or
// a provisioning started by one, records trigger_depth in its input); 0 for
// events of anything else.
func (s *Store) EventTriggerDepth(ctx context.Context, scope models.Scope, data map[string]any) int {
	depth := TriggerDepth(data)
	if id, ok := data["request_id"].(string); ok && id != "" {
		if op, err := s.operations.OperationIn(ctx, scope, id); err == nil {
			switch d := op.Input["trigger_depth"].(type) {
			case float64:
				depth = max(depth, int(d))
			case int:
				depth = max(depth, d)
			}
		}
	}
	return depth
}

// RecordEventOnce writes ev to the outbox in scope unless an event with its
// id exists (an activity's retry with a derived id).
func (s *Store) RecordEventOnce(ctx context.Context, scope models.Scope, ev *eventlog.Event) error {
	return models.DBErr(s.In(ctx, scope).Clauses(clause.OnConflict{DoNothing: true}).Create(ev).Error)
}

// TriggeredRunID returns the request id of the run that event evtID starts
// for orchestration defID: the same event always gives the same run.
func TriggeredRunID(defID, evtID string) string {
	return DerivedID(models.PrefixWorkflow, defID+"/"+evtID)
}

// PrepareTriggeredRun creates, once, the operation of the run of
// orchestration defID that event ev starts (pending, one step per step;
// depth is its place in a chain of triggered runs, see EventTriggerDepth),
// lists it first in the trigger's items (keeping the latest 100) and counts
// it on the definition. It returns the run's operation and the definition.
// Errors: NOT_FOUND, INVALID_STATE_TRANSITION (the trigger is no longer active).
func (s *Store) PrepareTriggeredRun(ctx context.Context, scope models.Scope, defID string, ev TriggerEvent, depth int) (*operations.Operation, *OrchestrationDefinition, error) {
	runID := TriggeredRunID(defID, ev.ID)
	var (
		run *operations.Operation
		def OrchestrationDefinition
	)
	err := s.Tx(ctx, scope, func(tx *gorm.DB) error {
		if err := tx.Where("id = ?", defID).Take(&def).Error; err != nil {
			return models.NotFoundOr(err, "orchestration workflow")
		}
		var existing operations.Operation
		err := tx.Where("id = ?", runID).Take(&existing).Error
		if err == nil {
			run = &existing
			return nil
		}
		if !errors.Is(err, gorm.ErrRecordNotFound) {
			return err
		}
		if !def.Active {
			return models.Errorf(models.CodeInvalidStateTransition, "orchestration %s is no longer active", defID)
		}
		run = operations.NewOperation(runID, OpTypeOrchestration, defID, def.CreatedBy, orchestrationSteps(&def), map[string]any{
			"definition_id": defID, "name": def.Name, "trigger": def.Trigger, "steps": def.Steps, "event": ev.Map(), "trigger_depth": depth,
		})
		if err := tx.Create(run).Error; err != nil {
			return err
		}
		if err := tx.Model(&OrchestrationDefinition{}).Where("id = ?", defID).Update("runs", gorm.Expr("runs + 1")).Error; err != nil {
			return err
		}
		_, err = s.operations.UpdateOperation(ctx, scope, tx, defID, func(op *operations.Operation) error {
			if op.Status.Terminal() {
				return operations.ErrTerminal(op)
			}
			op.Status = operations.OpInProgress
			op.Items = append([]operations.OperationItem{{ID: runID, Status: string(operations.OpPending)}}, op.Items...)
			if len(op.Items) > MaxTriggerRunsListed {
				op.Items = op.Items[:MaxTriggerRunsListed]
			}
			return nil
		})
		return err
	})
	if err != nil {
		return nil, nil, models.AsError(err)
	}
	return run, &def, nil
}

// RecordTriggerRun sets the status (and error) of run runID in the items of
// event trigger triggerID. A trigger that has ended, or no longer lists the
// run, is left alone.
func (s *Store) RecordTriggerRun(ctx context.Context, scope models.Scope, triggerID, runID string, status operations.OperationStatus, e *operations.OperationError) error {
	_, err := s.operations.UpdateOperation(ctx, scope, nil, triggerID, func(op *operations.Operation) error {
		if op.Status.Terminal() {
			return nil
		}
		for i := range op.Items {
			if op.Items[i].ID == runID {
				op.Items[i].Status, op.Items[i].Error = string(status), e
			}
		}
		return nil
	})
	if models.ErrorCode(err) == models.CodeNotFound {
		return nil
	}
	return err
}

// FinishTrigger ends an event trigger (it was cancelled): its definition
// becomes inactive and its operation cancelled, with the number of runs it
// started as result. Calling it again is harmless.
func (s *Store) FinishTrigger(ctx context.Context, scope models.Scope, id string) error {
	var def OrchestrationDefinition
	err := s.Tx(ctx, scope, func(tx *gorm.DB) error {
		if err := tx.Where("id = ?", id).Take(&def).Error; err != nil {
			return models.NotFoundOr(err, "orchestration workflow")
		}
		return tx.Model(&OrchestrationDefinition{}).Where("id = ?", id).Update("active", false).Error
	})
	if err != nil {
		return models.AsError(err)
	}
	_, err = s.operations.FinishOperation(ctx, scope, id, operations.FinishInput{Status: operations.OpCancelled, Result: map[string]any{"runs": def.Runs, "active": false}})
	if models.ErrorCode(err) == models.CodeInvalidStateTransition {
		return nil
	}
	return err
}

// DeactivateOrchestration marks an orchestration inactive (its trigger's
// workflow is gone), so that no event is sent to it again.
func (s *Store) DeactivateOrchestration(ctx context.Context, scope models.Scope, id string) error {
	return models.DBErr(s.In(ctx, scope).Model(&OrchestrationDefinition{}).Where("id = ?", id).Update("active", false).Error)
}

// StepOutcome is how one step of a run ended.
type StepOutcome struct {
	Order  int                        `json:"order"`
	Status operations.StepStatus      `json:"status"`
	Output map[string]any             `json:"output,omitempty"`
	Error  *operations.OperationError `json:"error,omitempty"`
}

// FailStep marks a step failed with e. Errors: NOT_FOUND,
// INVALID_STATE_TRANSITION (the operation has ended).
func (s *Store) FailStep(ctx context.Context, scope models.Scope, id, step string, e *operations.OperationError) error {
	_, err := s.operations.UpdateOperation(ctx, scope, nil, id, func(op *operations.Operation) error {
		if op.Status.Terminal() {
			return operations.ErrTerminal(op)
		}
		st := op.Step(step)
		now := s.Now()
		if st.StartedAt == nil {
			st.StartedAt = &now
		}
		st.Status, st.FinishedAt, st.Error = operations.StepFailed, &now, e
		return nil
	})
	return err
}

// FinishOrchestration ends a run: completed when every step completed,
// cancelled when it was cancelled, failed otherwise. Steps still pending
// become skipped and steps still running cancelled; the result lists the
// steps that ran (completed), failed and were skipped, and each step's
// outputs by order. Finishing it again is harmless.
// Errors: NOT_FOUND, INVALID_STATE_TRANSITION (it ended otherwise).
func (s *Store) FinishOrchestration(ctx context.Context, scope models.Scope, id string, cancelled bool, outcomes []StepOutcome) (*operations.Operation, error) {
	return s.operations.UpdateOperation(ctx, scope, nil, id, func(op *operations.Operation) error {
		if op.Status.Terminal() {
			return nil
		}
		now := s.Now()
		var ran, failed, skipped, stopped []string
		for i := range op.Steps {
			st := &op.Steps[i]
			switch st.Status {
			case operations.StepPending:
				st.Status = operations.StepSkipped
			case operations.StepInProgress:
				st.Status, st.FinishedAt = operations.StepCancelled, &now
			}
			switch st.Status {
			case operations.StepCompleted:
				ran = append(ran, st.Name)
			case operations.StepFailed:
				failed = append(failed, st.Name)
			case operations.StepSkipped:
				skipped = append(skipped, st.Name)
			case operations.StepCancelled:
				stopped = append(stopped, st.Name)
			}
		}
		outputs := map[string]any{}
		for _, o := range outcomes {
			if o.Output != nil {
				outputs[strconv.Itoa(o.Order)] = o.Output
			}
		}
		op.Result = map[string]any{"ran": nonNil(ran), "failed": nonNil(failed), "skipped": nonNil(skipped), "cancelled": nonNil(stopped), "outputs": outputs}
		op.Error = nil
		switch {
		case cancelled:
			op.Status = operations.OpCancelled
		case len(failed) == 0 && len(skipped) == 0 && len(stopped) == 0:
			op.Status = operations.OpCompleted
		default:
			op.Status = operations.OpFailed
			details := map[string]any{"failed_steps": nonNil(failed), "skipped_steps": nonNil(skipped)}
			code, msg := models.CodeProvisioningFailed, "the orchestration did not complete"
			for _, st := range op.Steps {
				if st.Status == operations.StepFailed && st.Error != nil {
					code, msg = st.Error.Code, fmt.Sprintf("step %s failed: %s", st.Name, st.Error.Message)
					details["first_failed_step"] = st.Name
					break
				}
			}
			if len(skipped) > 0 {
				msg += fmt.Sprintf("; %d dependent steps were skipped", len(skipped))
			}
			op.Error = &operations.OperationError{Code: code, Message: msg, Details: details}
		}
		op.FinishedAt = &now
		return nil
	})
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// EnsureOperation creates op in scope unless an operation with its id
// exists (an activity's retry); either way it returns the stored one.
func (s *Store) EnsureOperation(ctx context.Context, scope models.Scope, op *operations.Operation) (*operations.Operation, error) {
	db := s.In(ctx, scope)
	if err := db.Clauses(clause.OnConflict{DoNothing: true}).Create(op).Error; err != nil {
		return nil, models.DBErr(err)
	}
	return s.operations.OperationIn(ctx, scope, op.ID)
}

// DeleteOrchestration removes an orchestration whose workflow could not be
// started: its definition and its operation (still pending).
func (s *Store) DeleteOrchestration(ctx context.Context, scope models.Scope, id string) error {
	return models.DBErr(s.Tx(ctx, scope, func(tx *gorm.DB) error {
		if err := tx.Where("id = ? AND status = ?", id, operations.OpPending).Delete(&operations.Operation{}).Error; err != nil {
			return err
		}
		return tx.Where("id = ?", id).Delete(&OrchestrationDefinition{}).Error
	}))
}

// StepUpdateInput returns the change of service that a modify_service or
// scale_service step's (resolved) parameters ask for, and whether every
// value is known (no reference left). Errors: VALIDATION_ERROR (fields
// relative to the step's parameters).
func StepUpdateInput(action string, params map[string]any) (services.ServiceUpdateInput, bool, error) {
	complete := true
	str := func(v any) string {
		sv, _ := v.(string)
		if hasRef(sv) {
			complete = false
		}
		return strings.TrimSpace(sv)
	}
	if action == ActionModifyService {
		c, _ := params["changes"].(map[string]any)
		ch := ServiceChanges{Name: str(c["name"]), SLA: str(c["sla"]), Bandwidth: str(c["bandwidth"]), Redundancy: str(c["redundancy"]), Monitoring: str(c["monitoring"])}
		if ch.Empty() {
			return services.ServiceUpdateInput{}, false, models.Invalid(models.FieldIssue{Field: "changes", Issue: "must change at least one of name, sla, bandwidth, redundancy, monitoring"})
		}
		return ch.UpdateInput(), complete, nil
	}
	var v models.Validator
	sc := &services.ScalingInput{Action: str(params["scaling_action"]), NewBandwidth: str(params["new_bandwidth"])}
	switch n := params["new_quantity"].(type) {
	case float64:
		sc.NewQuantity = int(n)
	case int:
		sc.NewQuantity = n
	}
	if d := str(params["effective_date"]); d != "" && !hasRef(d) {
		t, err := time.Parse(time.RFC3339, d)
		v.Check(err == nil, "effective_date", "must be an RFC 3339 time")
		sc.EffectiveDate = &t
	}
	if w, ok := params["maintenance_window"].(map[string]any); ok {
		sc.Window = &services.MaintenanceWindowInput{Duration: str(w["duration"])}
		if st := str(w["start"]); st != "" && !hasRef(st) {
			t, err := time.Parse(time.RFC3339, st)
			v.Check(err == nil, "maintenance_window.start", "must be an RFC 3339 time")
			sc.Window.Start = &t
		}
	}
	if err := v.Err(); err != nil {
		return services.ServiceUpdateInput{}, false, err
	}
	return services.ServiceUpdateInput{Scaling: sc}, complete, nil
}
