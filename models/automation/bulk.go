package automation

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/catalog"
	"github.com/telcoplatform/platform/models/operations"
	"github.com/telcoplatform/platform/models/services"
)

// Bounds of bulk requests (DECISIONS 2: at most 1,000 items).
const (
	MaxBulkItems           = 1000
	DefaultBulkConcurrency = 10
	MaxBulkConcurrency     = 50
)

// Statuses of a bulk item. completed and failed are what progress counts.
const (
	ItemPending    = "pending"
	ItemInProgress = "in_progress"
	ItemCompleted  = "completed"
	ItemFailed     = "failed"
	ItemRolledBack = "rolled_back"
	ItemSkipped    = "skipped"
	ItemCancelled  = "cancelled"
)

// ItemTerminal reports whether a bulk item in status s has ended.
func ItemTerminal(s string) bool {
	switch s {
	case ItemCompleted, ItemFailed, ItemRolledBack, ItemSkipped, ItemCancelled:
		return true
	}
	return false
}

// Status actions of POST /services/bulk/status.
const (
	ActionSuspend = "suspend"
	ActionResume  = "resume"
)

// BulkOptions are the `orchestration` object of a bulk request.
type BulkOptions struct {
	Parallel          bool `json:"parallel"`
	MaxConcurrency    int  `json:"max_concurrency"`
	RollbackOnFailure bool `json:"rollback_on_failure"`
}

// Window returns how many items may run at once: 1 unless parallel, else
// max_concurrency (default 10).
func (o BulkOptions) Window() int {
	if !o.Parallel {
		return 1
	}
	if o.MaxConcurrency <= 0 {
		return DefaultBulkConcurrency
	}
	return min(o.MaxConcurrency, MaxBulkConcurrency)
}

func (o BulkOptions) validate(v *models.Validator) {
	v.Check(o.MaxConcurrency >= 0 && o.MaxConcurrency <= MaxBulkConcurrency, "orchestration.max_concurrency",
		fmt.Sprintf("must be from 1 to %d", MaxBulkConcurrency))
}

// ServiceChanges are the changes of a bulk modification item (and of the
// modify_service orchestration action); empty fields stay as they are. They
// are applied by the services area's ServiceChange workflow, which validates
// them per kind of service, prices them and reserves any new bandwidth.
type ServiceChanges struct {
	Name       string `json:"name,omitempty"`
	SLA        string `json:"sla,omitempty"`
	Bandwidth  string `json:"bandwidth,omitempty"`
	Redundancy string `json:"redundancy,omitempty"`
	Monitoring string `json:"monitoring,omitempty"`
}

// Empty reports whether c changes nothing.
func (c ServiceChanges) Empty() bool { return c == ServiceChanges{} }

// merged returns c with the fields it leaves empty taken from def.
func (c ServiceChanges) merged(def ServiceChanges) ServiceChanges {
	pick := func(v, d string) string { return services.OrDefault(strings.TrimSpace(v), strings.TrimSpace(d)) }
	return ServiceChanges{Name: pick(c.Name, def.Name), SLA: pick(c.SLA, def.SLA), Bandwidth: pick(c.Bandwidth, def.Bandwidth),
		Redundancy: pick(c.Redundancy, def.Redundancy), Monitoring: pick(c.Monitoring, def.Monitoring)}
}

// UpdateInput returns c as a change of a service (PrepareServiceUpdate):
// monitoring and redundancy are settings of its configuration.
func (c ServiceChanges) UpdateInput() services.ServiceUpdateInput {
	var in services.ServiceUpdateInput
	opt := func(v string) *string {
		if v == "" {
			return nil
		}
		return &v
	}
	in.Name, in.SLA, in.Bandwidth = opt(c.Name), opt(c.SLA), opt(c.Bandwidth)
	if c.Monitoring != "" || c.Redundancy != "" {
		in.Configuration = map[string]any{}
		if c.Monitoring != "" {
			in.Configuration["monitoring"] = c.Monitoring
		}
		if c.Redundancy != "" {
			in.Configuration["redundancy"] = c.Redundancy
		}
	}
	return in
}

// noChange reports whether err is PrepareServiceUpdate's answer to a change
// that changes nothing (every field already has the value asked for).
func noChange(err error) bool {
	e := models.AsError(err)
	if e.Code != models.CodeValidation {
		return false
	}
	fields, _ := e.Details["fields"].([]models.FieldIssue)
	return len(fields) == 1 && fields[0].Field == "(body)"
}

// BulkItem is one item of a bulk operation: what it acts on and what it was
// asked to do. Its status lives in the operation's items (same position).
type BulkItem struct {
	OperationID string `gorm:"primaryKey;size:64"`
	Position    int    `gorm:"primaryKey;autoIncrement:false"`
	models.Tenant
	ServiceID string                      `gorm:"size:40;not null;index"`
	ChildID   string                      `gorm:"size:64"` // bulk provision: the item's provisioning request id (prov_)
	Spec      map[string]any              `gorm:"serializer:json;type:text"`
	Order     *services.ProvisioningOrder `gorm:"serializer:json;type:text"`
	Changes   *ServiceChanges             `gorm:"serializer:json;type:text"`
	Action    string                      `gorm:"size:20"`
	// SourcePosition is, for a retry, the item's position in the retried operation.
	SourcePosition *int
	CreatedAt      time.Time
}

// ChangeKey returns the key of the service change this item makes (see ServiceChange).
func (it *BulkItem) ChangeKey() string { return ChangeKey(it.OperationID, it.Position) }

// ChangeKey returns the key of the change made by item (or step) n of operation opID.
func ChangeKey(opID string, n int) string { return fmt.Sprintf("%s#%d", opID, n) }

// BulkPlan is a validated bulk request, ready to be stored and run.
type BulkPlan struct {
	Type    operations.OperationType
	Scope   models.Scope
	Options BulkOptions
	Items   []BulkItem
	RetryOf string
	Input   map[string]any
}

// BulkProvisionItem is one entry of the bulk provisioning request's services.
type BulkProvisionItem struct {
	Template   string
	Location   string // a location id (loc_...) or "address, city, ST zip"
	Bandwidth  string
	Redundancy string
	Monitoring string
}

// spec returns the item as the client sent it (kept for retries).
func (it BulkProvisionItem) spec() map[string]any {
	return map[string]any{"template": it.Template, "location": it.Location, "customizations": map[string]any{
		"bandwidth": it.Bandwidth, "redundancy": it.Redundancy, "monitoring": it.Monitoring}}
}

func provisionItemFromSpec(m map[string]any) BulkProvisionItem {
	str := func(m map[string]any, k string) string { s, _ := m[k].(string); return s }
	c, _ := m["customizations"].(map[string]any)
	return BulkProvisionItem{Template: str(m, "template"), Location: str(m, "location"),
		Bandwidth: str(c, "bandwidth"), Redundancy: str(c, "redundancy"), Monitoring: str(c, "monitoring")}
}

// BulkProvisionInput is the bulk provisioning request (spec 2.2) plus the
// billing account, which the specification leaves out (default: the
// organization's oldest).
type BulkProvisionInput struct {
	Items     []BulkProvisionItem
	AccountID string
	Options   BulkOptions
}

// ParseLocation reads a location string: a location id (loc_...) or a postal
// location written "address, city, ST zip". Errors: VALIDATION_ERROR under field.
func ParseLocation(field, s string) (id string, loc *catalog.LocationInput, err error) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, catalog.PrefixLocation+"_") {
		if !models.HasPrefix(s, catalog.PrefixLocation) {
			return "", nil, models.Invalid(models.FieldIssue{Field: field, Issue: "is not a location id"})
		}
		return s, nil, nil
	}
	parts := strings.Split(s, ",")
	if len(parts) >= 3 {
		last := strings.Fields(parts[len(parts)-1])
		if len(last) == 2 {
			in := catalog.LocationInput{Address: strings.Join(parts[:len(parts)-2], ","), City: parts[len(parts)-2], State: last[0], Zip: last[1]}
			var v models.Validator
			in.Validate(&v, field)
			if err := v.Err(); err != nil {
				return "", nil, err
			}
			n := in.Normalize()
			return "", &n, nil
		}
	}
	return "", nil, models.Invalid(models.FieldIssue{Field: field, Issue: `must be a location id (loc_...) or "address, city, ST zip", e.g. "100 Congress Ave, Austin, TX 78701"`})
}

// bulkField maps a field of a single order's validation to its place in item i.
func bulkField(i int, field string) string {
	prefix := fmt.Sprintf("services[%d]", i)
	switch {
	case field == "service_template":
		return prefix + ".template"
	case field == "location_id" || field == "location" || strings.HasPrefix(field, "location."):
		return prefix + ".location"
	case field == "bandwidth":
		return prefix + ".customizations.bandwidth"
	case field == "account_id":
		return "account_id"
	}
	return prefix + "." + field
}

// itemFailure is one item that cannot be accepted, for details.items.
type itemFailure struct {
	Index   int            `json:"index"`
	Code    models.Code    `json:"code"`
	Message string         `json:"message"`
	Details map[string]any `json:"details,omitempty"`
}

// maxReportedFailures bounds details.items of a refused bulk request.
const maxReportedFailures = 100

// bulkRefusal turns per-item failures into one error: VALIDATION_ERROR with
// every field issue when any item is invalid; otherwise the first failing
// item's code (a 422 one) with details.items listing every failing item.
func bulkRefusal(issues []models.FieldIssue, failures []itemFailure) error {
	if len(issues) > 0 {
		return models.Invalid(issues...)
	}
	if len(failures) == 0 {
		return nil
	}
	first := failures[0]
	e := models.Errorf(first.Code, "services[%d]: %s", first.Index, first.Message)
	for k, v := range first.Details {
		e.WithDetail(k, v)
	}
	return e.WithDetail("index", first.Index).WithDetail("failed_items", len(failures)).
		WithDetail("items", failures[:min(len(failures), maxReportedFailures)])
}

// collectItemError files err of item i as field issues or an item failure;
// it returns err when it is neither (an internal failure).
func collectItemError(err error, i int, issues *[]models.FieldIssue, failures *[]itemFailure) error {
	e := models.AsError(err)
	switch e.Code {
	case models.CodeValidation:
		fields, _ := e.Details["fields"].([]models.FieldIssue)
		for _, f := range fields {
			*issues = append(*issues, models.FieldIssue{Field: bulkField(i, f.Field), Issue: f.Issue})
		}
		if len(fields) == 0 {
			*issues = append(*issues, models.FieldIssue{Field: fmt.Sprintf("services[%d]", i), Issue: e.Message})
		}
	case models.CodeUnavailableAtLocation, models.CodeInsufficientBandwidth, models.CodeLocationNotServiceable:
		*failures = append(*failures, itemFailure{Index: i, Code: e.Code, Message: e.Message, Details: e.Details})
	default:
		return err
	}
	return nil
}

// PrepareBulkProvision validates a bulk provisioning request for principal
// p: 1 to 1,000 items, each a template order (as POST /services/provision)
// at its location, all for one billing account; every item is checked now
// (fields, template, location, availability), so a request that cannot be
// run is refused whole. Availability is checked per item: items that fit
// alone but not together fail in the operation (reserve_capacity).
// Errors: VALIDATION_ERROR (fields named services[i]...), and for items that
// cannot be served the first one's LOCATION_NOT_SERVICEABLE,
// SERVICE_UNAVAILABLE_AT_LOCATION or INSUFFICIENT_BANDWIDTH with
// details.index and details.items (every failing item).
func (s *Store) PrepareBulkProvision(ctx context.Context, p *models.Principal, in BulkProvisionInput) (*BulkPlan, error) {
	var v models.Validator
	v.Check(len(in.Items) > 0, "services", "must list at least one service")
	v.Check(len(in.Items) <= MaxBulkItems, "services", fmt.Sprintf("must list at most %d services", MaxBulkItems))
	in.Options.validate(&v)
	if err := v.Err(); err != nil {
		return nil, err
	}
	plan := &BulkPlan{Type: operations.OpTypeBulkProvision, Options: in.Options}
	var (
		issues   []models.FieldIssue
		failures []itemFailure
	)
	accountID := strings.TrimSpace(in.AccountID)
	for i, item := range in.Items {
		tin := services.TemplateInput{ServiceTemplate: item.Template, Bandwidth: item.Bandwidth, Redundancy: item.Redundancy,
			Monitoring: item.Monitoring, AccountID: accountID}
		id, loc, err := ParseLocation(fmt.Sprintf("services[%d].location", i), item.Location)
		if err != nil {
			issues = append(issues, models.AsError(err).Details["fields"].([]models.FieldIssue)...)
			continue
		}
		tin.LocationID, tin.Location = id, loc
		o, scope, err := s.services.PrepareTemplateOrder(ctx, p, tin)
		if err != nil {
			if err := collectItemError(err, i, &issues, &failures); err != nil {
				return nil, err
			}
			continue
		}
		if accountID == "" {
			accountID = o.AccountID // every item uses the account the first one resolved
		}
		if plan.Scope.OrganizationID == "" {
			plan.Scope = scope
		}
		plan.Items = append(plan.Items, BulkItem{
			Position: i, ServiceID: models.NewID(models.PrefixService), ChildID: models.NewID(models.PrefixProvisioning), Order: o, Spec: item.spec(),
		})
	}
	if err := bulkRefusal(issues, failures); err != nil {
		return nil, err
	}
	plan.Input = map[string]any{"account_id": accountID}
	return plan, nil
}

// BulkModifyItem is one entry of a bulk modification: a service and its
// changes (merged over the request's common changes).
type BulkModifyItem struct {
	ServiceID string
	Changes   ServiceChanges
}

// BulkModifyInput is the bulk modification request.
type BulkModifyInput struct {
	Items   []BulkModifyItem
	Changes ServiceChanges // applied to every item, under the item's own
	Options BulkOptions
}

// servicesForBulk loads the services named by ids, visible to p, checking
// that they exist, are not repeated and belong to one organization; it
// records the issues in v (field(i) names each bad id) and returns the
// services by position (absent for bad ids) and the organization's scope.
func (s *Store) servicesForBulk(ctx context.Context, p *models.Principal, v *models.Validator, ids []string, field func(i int) string, listField string) (map[int]services.Service, models.Scope, error) {
	v.Check(len(ids) > 0, listField, "must list at least one service")
	v.Check(len(ids) <= MaxBulkItems, listField, fmt.Sprintf("must list at most %d services", MaxBulkItems))
	if len(ids) == 0 || len(ids) > MaxBulkItems {
		return nil, models.Scope{}, nil
	}
	byID := map[string]services.Service{}
	for start := 0; start < len(ids); start += 500 {
		var batch []services.Service
		if err := s.In(ctx, p.Scope()).Where("id IN ?", ids[start:min(start+500, len(ids))]).Find(&batch).Error; err != nil {
			return nil, models.Scope{}, models.DBErr(err)
		}
		for _, svc := range batch {
			byID[svc.ID] = svc
		}
	}
	out := map[int]services.Service{}
	seen := map[string]bool{}
	var scope models.Scope
	for i, id := range ids {
		svc, ok := byID[id]
		switch {
		case !ok:
			v.Add(field(i), fmt.Sprintf("no service %q", id))
		case seen[id]:
			v.Add(field(i), fmt.Sprintf("service %s is listed twice", id))
		case scope.OrganizationID != "" && svc.OrganizationID != scope.OrganizationID:
			v.Add(field(i), "every service of a bulk request must belong to one organization")
		default:
			seen[id] = true
			if scope.OrganizationID == "" {
				scope = models.TenantScope(svc.OrganizationID, p.Environment)
			}
			out[i] = svc
		}
	}
	return out, scope, nil
}

// PrepareBulkModify validates a bulk modification for principal p: 1 to
// 1,000 distinct services of one organization, each with at least one
// change, every change valid for its service (as PUT /services/{id} checks
// it: name, sla among the offer's options, bandwidth, monitoring and
// redundancy settings of its kind). Whether a service can be changed now
// (its status, another change under way, capacity) is decided per item when
// the operation runs. Errors: VALIDATION_ERROR (fields services[i]...).
func (s *Store) PrepareBulkModify(ctx context.Context, p *models.Principal, in BulkModifyInput) (*BulkPlan, error) {
	var v models.Validator
	in.Options.validate(&v)
	ids := make([]string, len(in.Items))
	for i, it := range in.Items {
		ids[i] = strings.TrimSpace(it.ServiceID)
	}
	svcs, scope, err := s.servicesForBulk(ctx, p, &v, ids, func(i int) string { return fmt.Sprintf("services[%d].service_id", i) }, "services")
	if err != nil {
		return nil, err
	}
	plan := &BulkPlan{Type: operations.OpTypeBulkModify, Scope: scope, Options: in.Options, Input: map[string]any{}}
	for i, it := range in.Items {
		ch := it.Changes.merged(in.Changes)
		prefix := fmt.Sprintf("services[%d].changes", i)
		if ch.Empty() {
			v.Add(prefix, "must change at least one of name, sla, bandwidth, redundancy, monitoring")
			continue
		}
		svc, ok := svcs[i]
		if !ok {
			continue
		}
		if _, _, _, err := s.services.PrepareServiceUpdate(ctx, p, svc.ID, ch.UpdateInput()); err != nil && !noChange(err) {
			e := models.AsError(err)
			if e.Code == models.CodeValidation {
				for _, f := range e.Details["fields"].([]models.FieldIssue) {
					v.Add(prefix+"."+strings.TrimPrefix(f.Field, "configuration."), f.Issue)
				}
			} else if e.Code == models.CodeInternal {
				return nil, err
			}
		}
		plan.Items = append(plan.Items, BulkItem{Position: i, ServiceID: svc.ID, Changes: &ch,
			Spec: map[string]any{"service_id": svc.ID, "changes": ch}})
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	return plan, nil
}

// ChangeOperation is a change of one service ready to run as the services
// area's ServiceChange workflow, or Noop when it changes nothing.
type ChangeOperation struct {
	Operation *operations.Operation
	Update    *services.ServiceUpdate
	Noop      bool
}

// PrepareChangeOperation validates change in of service serviceID for the
// tenant of scope (acting as createdBy) and creates, once, its operation
// with id opID (a modification or scaling that claims the service, as
// PUT /services/{id} does; the caller derives opID from its own operation so
// a retry finds it). input adds fields to the operation's input.
// Errors: NOT_FOUND, VALIDATION_ERROR, SERVICE_MAINTENANCE,
// INVALID_STATE_TRANSITION, SERVICE_CONFLICT, INSUFFICIENT_BANDWIDTH.
func (s *Store) PrepareChangeOperation(ctx context.Context, scope models.Scope, createdBy, opID, serviceID string, in services.ServiceUpdateInput, input map[string]any) (*ChangeOperation, error) {
	if op, err := s.operations.OperationIn(ctx, scope, opID); err == nil {
		var u services.ServiceUpdate
		if err := remarshal(op.Input["update"], &u); err != nil {
			return nil, models.Internal(err)
		}
		return &ChangeOperation{Operation: op, Update: &u}, nil
	} else if models.ErrorCode(err) != models.CodeNotFound {
		return nil, err
	}
	p := &models.Principal{Kind: models.PrincipalAPIKey, ID: createdBy, OrganizationID: scope.OrganizationID, Environment: scope.Environment,
		Role: models.RoleCustomer, Permissions: []string{"*"}}
	svc, u, svcScope, err := s.services.PrepareServiceUpdate(ctx, p, serviceID, in)
	if noChange(err) {
		return &ChangeOperation{Noop: true}, nil
	}
	if err != nil {
		return nil, err
	}
	opInput := map[string]any{"update": u, "changes": u.Changes}
	for k, val := range input {
		opInput[k] = val
	}
	var m map[string]any
	if err := remarshal(opInput, &m); err != nil {
		return nil, models.Internal(err)
	}
	op := operations.NewOperation(opID, u.Type, svc.ID, createdBy, services.UpdateSteps(u), m)
	if err := s.services.StartServiceOperation(ctx, svcScope, svc.ID, op); err != nil {
		if existing, gerr := s.operations.OperationIn(ctx, scope, opID); gerr == nil {
			return &ChangeOperation{Operation: existing, Update: u}, nil // a concurrent retry created it
		}
		return nil, err
	}
	return &ChangeOperation{Operation: op, Update: u}, nil
}

// ReverseChange returns the change that undoes the completed change
// operation opID (its recorded changes, back to their previous values), and
// false when there is nothing to undo (it never completed).
// Errors: NOT_FOUND.
func (s *Store) ReverseChange(ctx context.Context, scope models.Scope, opID string) (services.ServiceUpdateInput, bool, error) {
	var in services.ServiceUpdateInput
	op, err := s.operations.OperationIn(ctx, scope, opID)
	if err != nil || op.Status != operations.OpCompleted {
		return in, false, err
	}
	changes, _ := op.Input["changes"].(map[string]any)
	from := func(field string) (string, bool) {
		c, _ := changes[field].(map[string]any)
		v, ok := c["from"].(string)
		return v, ok
	}
	if v, ok := from("name"); ok {
		in.Name = &v
	}
	if v, ok := from("sla"); ok {
		in.SLA = &v
	}
	if v, ok := from("bandwidth"); ok && v != "" {
		in.Bandwidth = &v
	}
	for _, setting := range []string{"monitoring", "redundancy"} {
		if v, ok := from(setting); ok && v != "" {
			if in.Configuration == nil {
				in.Configuration = map[string]any{}
			}
			in.Configuration[setting] = v
		}
	}
	return in, in.Name != nil || in.SLA != nil || in.Bandwidth != nil || in.Configuration != nil, nil
}

// remarshal converts v into out through JSON.
func remarshal(v, out any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, out)
}
