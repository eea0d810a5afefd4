package automation

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/catalog"
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
		"ticket.created", "ticket.updated", "ticket.resolved", "ticket.escalated", "comment.added", "sla.breach", "sla.credit_issued",
		"report.completed", "report.failed", "analytics_report.completed", "analytics_report.failed",
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

// knownService reports whether the step's literal service_id names a
// service p may see, adding the issue to v when it does not (another
// tenant's service is unknown). Errors: the database's.
func (s *Store) knownService(ctx context.Context, p *models.Principal, v *models.Validator, f, id string) (bool, error) {
	if _, err := s.services.ServiceIn(ctx, p.Scope(), id); err != nil {
		if models.ErrorCode(err) != models.CodeNotFound {
			return false, err
		}
		v.Add(f+".service_id", fmt.Sprintf("no service %q", id))
		return false, nil
	}
	return true, nil
}

// checkStepParameters records the issues of one step's parameters under
// field f. Values holding references are checked when the step runs.
func (s *Store) checkStepParameters(ctx context.Context, p *models.Principal, v *models.Validator, f string, st OrchestrationStep) error {
	spec, _ := LookupAction(st.Action)
	if err := checkParameterShapes(v, f, spec, st.Parameters); err != nil {
		return err
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
			if !models.HasPrefix(a, models.PrefixAccount) {
				v.Add(f+".account_id", "must be a billing account id (acct_...)")
			} else {
				// As POST /v1/services/provision: an account the caller cannot
				// see is a bad reference, found before the 202.
				var n int64
				if err := s.In(ctx, p.Scope()).Model(&models.BillingAccount{}).Where("id = ?", a).Count(&n).Error; err != nil {
					return models.DBErr(err)
				}
				v.Check(n > 0, f+".account_id", fmt.Sprintf("no billing account %s in this organization", a))
			}
		}
	case ActionModifyService, ActionScaleService, ActionSuspendService, ActionResumeService:
		id, literal := str("service_id")
		if literal {
			known, err := s.knownService(ctx, p, v, f, id)
			if err != nil {
				return err
			}
			literal = known
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
		if id, literal := str("service_id"); literal && id != "" {
			if _, err := s.knownService(ctx, p, v, f, id); err != nil {
				return err
			}
		}
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
