package automation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
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

// BulkStatusInput is POST /services/bulk/status with an action.
type BulkStatusInput struct {
	ServiceIDs []string
	Action     string
	Options    BulkOptions
}

// PrepareBulkStatus validates a bulk status change for principal p: 1 to
// 1,000 distinct services of one organization and the action suspend
// (operational, degraded or down → maintenance) or resume (maintenance →
// operational). Whether each service can make the move is decided per item
// when the operation runs. Errors: VALIDATION_ERROR.
func (s *Store) PrepareBulkStatus(ctx context.Context, p *models.Principal, in BulkStatusInput) (*BulkPlan, error) {
	var v models.Validator
	v.Check(in.Action == ActionSuspend || in.Action == ActionResume, "action", "must be suspend or resume (or absent, to read the statuses)")
	in.Options.validate(&v)
	svcs, scope, err := s.servicesForBulk(ctx, p, &v, in.ServiceIDs, func(i int) string { return fmt.Sprintf("service_ids[%d]", i) }, "service_ids")
	if err != nil {
		return nil, err
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	plan := &BulkPlan{Type: operations.OpTypeBulkStatus, Scope: scope, Options: in.Options, Input: map[string]any{"action": in.Action}}
	for i := range in.ServiceIDs {
		svc := svcs[i]
		plan.Items = append(plan.Items, BulkItem{Position: i, ServiceID: svc.ID, Action: in.Action,
			Spec: map[string]any{"service_id": svc.ID, "action": in.Action}})
	}
	return plan, nil
}

// ServiceStatusEntry is one service's status in a bulk status read.
type ServiceStatusEntry struct {
	ServiceID       string
	Found           bool
	Status          services.ServiceStatus
	StatusChangedAt time.Time
}

// BulkServiceStatuses returns the status of each service named (at most
// 1,000), in order; services that p cannot see are reported not found, the
// same as ids that do not exist. Errors: VALIDATION_ERROR.
func (s *Store) BulkServiceStatuses(ctx context.Context, p *models.Principal, ids []string) ([]ServiceStatusEntry, error) {
	var v models.Validator
	v.Check(len(ids) > 0, "service_ids", "must list at least one service")
	v.Check(len(ids) <= MaxBulkItems, "service_ids", fmt.Sprintf("must list at most %d services", MaxBulkItems))
	if err := v.Err(); err != nil {
		return nil, err
	}
	byID := map[string]services.Service{}
	for start := 0; start < len(ids); start += 500 {
		var batch []services.Service
		err := s.In(ctx, p.Scope()).Select("id", "organization_id", "environment", "status", "status_changed_at").
			Where("id IN ?", ids[start:min(start+500, len(ids))]).Find(&batch).Error
		if err != nil {
			return nil, models.DBErr(err)
		}
		for _, svc := range batch {
			byID[svc.ID] = svc
		}
	}
	out := make([]ServiceStatusEntry, len(ids))
	for i, id := range ids {
		svc, ok := byID[id]
		out[i] = ServiceStatusEntry{ServiceID: id, Found: ok, Status: svc.Status, StatusChangedAt: svc.StatusChangedAt}
	}
	return out, nil
}

// CreateBulkOperation stores a bulk operation (pending, every item pending)
// and its items in one transaction, as the principal createdBy. For a retry
// it also records the new operation on the retried one (result.retried_by),
// refusing a second retry of the same operation.
// Errors: INVALID_STATE_TRANSITION (already retried), NOT_FOUND.
func (s *Store) CreateBulkOperation(ctx context.Context, plan *BulkPlan, id, createdBy string) (*operations.Operation, error) {
	input := map[string]any{"orchestration": plan.Options, "total": len(plan.Items)}
	for k, val := range plan.Input {
		input[k] = val
	}
	if plan.RetryOf != "" {
		input["retry_of"] = plan.RetryOf
	}
	op := operations.NewOperation(id, plan.Type, "", createdBy, nil, input)
	op.Steps = []operations.OperationStep{}
	op.Items = make([]operations.OperationItem, len(plan.Items))
	items := make([]BulkItem, len(plan.Items))
	for i, it := range plan.Items {
		it.OperationID, it.Position = id, i
		items[i] = it
		op.Items[i] = operations.OperationItem{ID: it.ServiceID, Status: ItemPending}
	}
	err := s.Tx(ctx, plan.Scope, func(tx *gorm.DB) error {
		if plan.RetryOf != "" {
			_, err := s.operations.UpdateOperation(ctx, plan.Scope, tx, plan.RetryOf, func(orig *operations.Operation) error {
				if by, ok := orig.Result["retried_by"].(string); ok && by != "" {
					return models.Errorf(models.CodeInvalidStateTransition, "operation %s was already retried by %s", orig.ID, by).WithDetail("retried_by", by)
				}
				if orig.Result == nil {
					orig.Result = map[string]any{}
				}
				orig.Result["retried_by"] = id
				return nil
			})
			if err != nil {
				return err
			}
		}
		if err := tx.Create(op).Error; err != nil {
			return err
		}
		return tx.CreateInBatches(items, 200).Error
	})
	if err != nil {
		return nil, models.DBErr(err)
	}
	return op, nil
}

// BulkItems returns the items of operation opID at positions [from, from+limit)
// whose status (in the operation's items) is one of statuses (any when
// none), in position order, and the position after the last one examined.
// Errors: NOT_FOUND.
func (s *Store) BulkItems(ctx context.Context, scope models.Scope, opID string, from, limit int, statuses ...string) ([]BulkItem, int, error) {
	op, err := s.operations.OperationIn(ctx, scope, opID)
	if err != nil {
		return nil, from, err
	}
	var positions []int
	next := from
	for ; next < len(op.Items) && len(positions) < limit; next++ {
		if len(statuses) == 0 || slices.Contains(statuses, op.Items[next].Status) {
			positions = append(positions, next)
		}
	}
	if len(positions) == 0 {
		return nil, next, nil
	}
	var items []BulkItem
	err = s.In(ctx, scope).Where("operation_id = ? AND position IN ?", opID, positions).Order("position").Find(&items).Error
	return items, next, models.DBErr(err)
}

// EnsureChildOperations creates, once, the provisioning operation (pending)
// that each bulk provisioning item runs as, so that the item's Provisioning
// workflow can start. Calling it again changes nothing.
func (s *Store) EnsureChildOperations(ctx context.Context, scope models.Scope, createdBy string, items []BulkItem) error {
	ops := make([]*operations.Operation, 0, len(items))
	for _, it := range items {
		if it.ChildID == "" || it.Order == nil {
			continue
		}
		ops = append(ops, operations.NewOperation(it.ChildID, operations.OpTypeProvisioning, it.ServiceID, createdBy, operations.ProvisioningSteps(false),
			map[string]any{"bulk_request_id": it.OperationID, "position": it.Position}))
	}
	if len(ops) == 0 {
		return nil
	}
	return models.DBErr(s.In(ctx, scope).Clauses(clause.OnConflict{DoNothing: true}).CreateInBatches(ops, 100).Error)
}

// ItemUpdate is a new status of one bulk item.
type ItemUpdate struct {
	Position int                        `json:"position"`
	Status   string                     `json:"status"`
	Error    *operations.OperationError `json:"error,omitempty"`
}

// RecordBulkItems applies updates to the operation's items in one write. An
// update never moves an item that has ended back to pending or in_progress.
// Errors: NOT_FOUND, INVALID_STATE_TRANSITION (the operation has ended).
func (s *Store) RecordBulkItems(ctx context.Context, scope models.Scope, opID string, updates []ItemUpdate) (*operations.Operation, error) {
	return s.operations.UpdateOperation(ctx, scope, nil, opID, func(op *operations.Operation) error {
		if op.Status.Terminal() {
			return operations.ErrTerminal(op)
		}
		op.Status = operations.OpInProgress
		for _, u := range updates {
			if u.Position < 0 || u.Position >= len(op.Items) {
				continue
			}
			it := &op.Items[u.Position]
			if ItemTerminal(it.Status) && !ItemTerminal(u.Status) {
				continue
			}
			it.Status, it.Error = u.Status, u.Error
		}
		return nil
	})
}

// BulkFinish says how a bulk operation's workflow ended.
type BulkFinish struct {
	Cancelled  bool `json:"cancelled"`   // the operation was cancelled
	RolledBack bool `json:"rolled_back"` // rollback_on_failure undid the completed items
}

// BulkOutcome counts a bulk operation's items by status.
type BulkOutcome struct {
	Total, Completed, Failed, RolledBack, Skipped, Cancelled, Other int
	// RollbackFailed counts completed items whose rollback failed.
	RollbackFailed int
}

// CountItems counts items by status.
func CountItems(items []operations.OperationItem) BulkOutcome {
	o := BulkOutcome{Total: len(items)}
	for _, it := range items {
		switch it.Status {
		case ItemCompleted:
			o.Completed++
			if it.Error != nil {
				o.RollbackFailed++
			}
		case ItemFailed:
			o.Failed++
		case ItemRolledBack:
			o.RolledBack++
		case ItemSkipped:
			o.Skipped++
		case ItemCancelled:
			o.Cancelled++
		default:
			o.Other++
		}
	}
	return o
}

// BulkStatus returns the final status of a bulk operation whose items ended
// as o: cancelled when it was cancelled; rolled_back when a rollback undid
// every completed item (failed when some could not be undone); otherwise
// completed when every item completed, failed when none did, partial between.
func BulkStatus(o BulkOutcome, fin BulkFinish) operations.OperationStatus {
	switch {
	case fin.Cancelled:
		return operations.OpCancelled
	case fin.RolledBack && o.RollbackFailed > 0:
		return operations.OpFailed
	case fin.RolledBack:
		return operations.OpRolledBack
	case o.Completed == o.Total:
		return operations.OpCompleted
	case o.Completed == 0:
		return operations.OpFailed
	}
	return operations.OpPartial
}

// bulkFailureCode is the code of a bulk operation's error.
func bulkFailureCode(t operations.OperationType, items []operations.OperationItem) models.Code {
	if t == operations.OpTypeBulkProvision {
		return models.CodeProvisioningFailed
	}
	for _, it := range items {
		if it.Status == ItemFailed && it.Error != nil {
			return it.Error.Code
		}
	}
	return models.CodeServiceConflict
}

// FinishBulk ends a bulk operation: items that never ended become skipped
// (cancelled when the operation was cancelled), the status follows
// BulkStatus from the items, the result counts them, and the error (status
// failed, partial or rolled_back) summarises the failures; the first failed
// item is in details. Finishing it again is harmless.
// Errors: NOT_FOUND, INVALID_STATE_TRANSITION (it ended otherwise).
func (s *Store) FinishBulk(ctx context.Context, scope models.Scope, opID string, fin BulkFinish) (*operations.Operation, error) {
	return s.operations.UpdateOperation(ctx, scope, nil, opID, func(op *operations.Operation) error {
		if op.Status.Terminal() {
			return nil
		}
		left := ItemSkipped
		if fin.Cancelled {
			left = ItemCancelled
		}
		for i := range op.Items {
			if !ItemTerminal(op.Items[i].Status) {
				op.Items[i].Status = left
			}
		}
		o := CountItems(op.Items)
		now := s.Now()
		op.Status, op.FinishedAt = BulkStatus(o, fin), &now
		result := map[string]any{
			"total": o.Total, "completed": o.Completed, "failed": o.Failed, "rolled_back": o.RolledBack,
			"skipped": o.Skipped, "cancelled": o.Cancelled,
		}
		if op.Result != nil {
			if by, ok := op.Result["retried_by"]; ok {
				result["retried_by"] = by
			}
		}
		if retry, ok := op.Input["retry_of"]; ok {
			result["retry_of"] = retry
		}
		if op.Status != operations.OpCompleted && o.Completed < o.Total {
			result["retry_url"] = "/v1/operations/" + op.ID + "/retry"
		}
		op.Result = result
		op.Error = nil
		if op.Status == operations.OpFailed || op.Status == operations.OpPartial || op.Status == operations.OpRolledBack {
			first := -1
			for i, it := range op.Items {
				if it.Status == ItemFailed || (it.Status == ItemCompleted && it.Error != nil) {
					first = i
					break
				}
			}
			details := map[string]any{"failed": o.Failed, "total": o.Total}
			msg := fmt.Sprintf("%d of %d items failed", o.Failed, o.Total)
			if o.RollbackFailed > 0 {
				details["rollback_failed"] = o.RollbackFailed
				msg += fmt.Sprintf("; %d completed items could not be rolled back", o.RollbackFailed)
			} else if fin.RolledBack {
				msg += "; the completed items were rolled back"
			}
			if first >= 0 {
				details["first_failed_position"] = first
				details["first_failed_service_id"] = op.Items[first].ID
				if e := op.Items[first].Error; e != nil {
					details["first_error"] = map[string]any{"code": string(e.Code), "message": e.Message}
					msg += fmt.Sprintf("; the first (services[%d]): %s", first, e.Message)
				}
			}
			op.Error = &operations.OperationError{Code: bulkFailureCode(op.Type, op.Items), Message: msg, Details: details}
		}
		return nil
	})
}

// retryableStatuses are the final statuses of a bulk operation that retry accepts.
var retryableStatuses = []operations.OperationStatus{operations.OpPartial, operations.OpFailed, operations.OpRolledBack, operations.OpCancelled}

// PrepareBulkRetry plans a new bulk operation that runs again the items of
// bulk operation opID that did not complete (failed, rolled_back, skipped or
// cancelled), with its orchestration options unless options is given. A
// provisioning item is validated again (availability may have changed) and
// gets a new service id. Errors: NOT_FOUND, INSUFFICIENT_PERMISSIONS,
// VALIDATION_ERROR (not a bulk operation), INVALID_STATE_TRANSITION (still
// running, completed, or already retried), and PrepareBulkProvision's 422 codes.
func (s *Store) PrepareBulkRetry(ctx context.Context, p *models.Principal, opID string, options *BulkOptions) (*BulkPlan, error) {
	op, err := s.operations.GetOperation(ctx, p, opID)
	if err != nil {
		return nil, err
	}
	if !op.Type.IsBulk() {
		return nil, models.Invalid(models.FieldIssue{Field: "request_id", Issue: fmt.Sprintf("only bulk operations can be retried; %s is a %s operation", op.ID, op.Type)})
	}
	if !slices.Contains(retryableStatuses, op.Status) {
		return nil, models.Errorf(models.CodeInvalidStateTransition, "operation %s is %s: only a partial, failed, rolled_back or cancelled bulk operation can be retried", op.ID, op.Status).
			WithDetail("status", string(op.Status))
	}
	if by, ok := op.Result["retried_by"].(string); ok && by != "" {
		return nil, models.Errorf(models.CodeInvalidStateTransition, "operation %s was already retried by %s", op.ID, by).WithDetail("retried_by", by)
	}
	var positions []int
	for i, it := range op.Items {
		if it.Status != ItemCompleted {
			positions = append(positions, i)
		}
	}
	if len(positions) == 0 {
		return nil, models.Errorf(models.CodeInvalidStateTransition, "every item of operation %s completed: nothing to retry", op.ID)
	}
	scope := models.TenantScope(op.OrganizationID, op.Environment)
	var items []BulkItem
	for start := 0; start < len(positions); start += 500 {
		var batch []BulkItem
		err := s.In(ctx, scope).Where("operation_id = ? AND position IN ?", op.ID, positions[start:min(start+500, len(positions))]).
			Order("position").Find(&batch).Error
		if err != nil {
			return nil, models.DBErr(err)
		}
		items = append(items, batch...)
	}
	opts := bulkOptionsFrom(op.Input)
	if options != nil {
		opts = *options
	}
	var plan *BulkPlan
	switch op.Type {
	case operations.OpTypeBulkProvision:
		in := BulkProvisionInput{Options: opts}
		in.AccountID, _ = op.Input["account_id"].(string)
		for _, it := range items {
			in.Items = append(in.Items, provisionItemFromSpec(it.Spec))
		}
		plan, err = s.PrepareBulkProvision(ctx, p, in)
	case operations.OpTypeBulkModify:
		in := BulkModifyInput{Options: opts}
		for _, it := range items {
			var ch ServiceChanges
			if it.Changes != nil {
				ch = *it.Changes
			}
			in.Items = append(in.Items, BulkModifyItem{ServiceID: it.ServiceID, Changes: ch})
		}
		plan, err = s.PrepareBulkModify(ctx, p, in)
	default:
		in := BulkStatusInput{Options: opts}
		for _, it := range items {
			in.ServiceIDs = append(in.ServiceIDs, it.ServiceID)
			in.Action = it.Action
		}
		plan, err = s.PrepareBulkStatus(ctx, p, in)
	}
	if err != nil {
		return nil, err
	}
	plan.RetryOf = op.ID
	for i := range plan.Items {
		src := items[i].Position
		plan.Items[i].SourcePosition = &src
	}
	return plan, nil
}

// bulkOptionsFrom reads the orchestration options stored in an operation's input.
func bulkOptionsFrom(input map[string]any) BulkOptions {
	var o BulkOptions
	m, _ := input["orchestration"].(map[string]any)
	o.Parallel, _ = m["parallel"].(bool)
	o.RollbackOnFailure, _ = m["rollback_on_failure"].(bool)
	if n, ok := m["max_concurrency"].(float64); ok {
		o.MaxConcurrency = int(n)
	}
	return o
}

// ServiceSnapshot is what a status change touches.
type ServiceSnapshot struct {
	Status services.ServiceStatus `json:"status"`
}

// Kinds of status change (bulk status and the suspend_service and
// resume_service orchestration actions).
const (
	ChangeSuspend = ActionSuspend
	ChangeResume  = ActionResume
)

// ServiceChange records one status change made to a service by a bulk item
// or an orchestration step (Key = "<request_id>#<position or step>"): the
// status before and after, so that the change is made once however often
// its activity runs, and can be undone (rollback_on_failure).
type ServiceChange struct {
	Key string `gorm:"primaryKey;column:change_key;size:100"`
	models.Tenant
	ServiceID   string          `gorm:"size:40;not null;index"`
	OperationID string          `gorm:"size:64;not null;index"`
	Kind        string          `gorm:"size:20;not null"`
	Before      ServiceSnapshot `gorm:"serializer:json;type:text"`
	After       ServiceSnapshot `gorm:"serializer:json;type:text"`
	AppliedAt   time.Time
	RevertedAt  *time.Time
}

// Event names written by status changes and rollbacks (DECISIONS 9).
const (
	eventServiceStatusChanged  = "service.status_changed"
	eventServiceDecommissioned = "service.decommissioned"
)

// ChangeRequest is a status change to make to one service: suspend or resume.
type ChangeRequest struct {
	Key         string
	OperationID string
	ServiceID   string
	Kind        string
}

// ServiceChangeTarget returns the status a change of kind moves svc to at
// now, or the error that forbids it: a suspension moves a delivered service
// (operational, degraded, down) to maintenance, a resumption moves a
// suspended one back to operational; a service already there stays.
// Errors: SERVICE_CONFLICT (another change of the service is under way),
// SERVICE_MAINTENANCE (resuming a service in a scheduled maintenance
// window), INVALID_STATE_TRANSITION, VALIDATION_ERROR (unknown kind).
func ServiceChangeTarget(kind string, svc *services.Service, now time.Time) (services.ServiceStatus, error) {
	if svc.PendingOperationID != "" {
		return "", models.Errorf(models.CodeServiceConflict, "operation %s is already changing service %s; wait for it to end, or cancel it", svc.PendingOperationID, svc.ID).
			WithDetail("operation_id", svc.PendingOperationID)
	}
	switch kind {
	case ChangeSuspend:
		if svc.Status == services.ServiceMaintenance {
			return svc.Status, nil
		}
		return services.ServiceMaintenance, services.CheckServiceTransition(svc.Status, services.ServiceMaintenance)
	case ChangeResume:
		switch {
		case svc.Status == services.ServiceOperational:
			return svc.Status, nil
		case svc.Status != services.ServiceMaintenance:
			return "", models.Errorf(models.CodeInvalidStateTransition, "only a suspended service (status maintenance) can be resumed; this one is %s", svc.Status).
				WithDetail("from", string(svc.Status)).WithDetail("to", string(services.ServiceOperational))
		case svc.MaintenanceEndsAt != nil && svc.MaintenanceEndsAt.After(now):
			return "", models.Errorf(models.CodeServiceMaintenance, "service %s is in a scheduled maintenance window until %s", svc.ID, models.Timestamp(*svc.MaintenanceEndsAt)).
				WithDetail("retry_after", max(1, int(svc.MaintenanceEndsAt.Sub(now).Seconds())))
		}
		return services.ServiceOperational, nil
	}
	return "", models.Invalid(models.FieldIssue{Field: "action", Issue: fmt.Sprintf("unknown change %q", kind)})
}

// ServiceForChange returns the service a status change would act on, after
// checking that the change is allowed now. Errors: NOT_FOUND, and those of
// ServiceChangeTarget.
func (s *Store) ServiceForChange(ctx context.Context, scope models.Scope, kind, serviceID string) (*services.Service, error) {
	svc, err := s.services.ServiceIn(ctx, scope, serviceID)
	if err != nil {
		return nil, err
	}
	if _, err := ServiceChangeTarget(kind, svc, s.Now()); err != nil {
		return nil, err
	}
	return svc, nil
}

// ApplyServiceChange makes the status change req, once: in one transaction
// it checks the service, moves it, records the change (ServiceChange) and
// writes service.status_changed (data: service, from, to, reason: suspend
// or resume, request_id) to the outbox. Applying the same key again returns
// the service as it is. Errors: NOT_FOUND, and those of ServiceChangeTarget.
func (s *Store) ApplyServiceChange(ctx context.Context, scope models.Scope, req ChangeRequest) (*services.Service, error) {
	var out *services.Service
	err := s.Tx(ctx, scope, func(tx *gorm.DB) error {
		var done ServiceChange
		err := tx.Where("change_key = ?", req.Key).Take(&done).Error
		if err == nil {
			var svc services.Service
			if err := tx.Where("id = ?", done.ServiceID).Take(&svc).Error; err != nil {
				return models.NotFoundOr(err, "service")
			}
			out = &svc
			return nil
		}
		if !errors.Is(err, gorm.ErrRecordNotFound) {
			return models.DBErr(err)
		}
		var svc services.Service
		if err := tx.Where("id = ?", req.ServiceID).Take(&svc).Error; err != nil {
			return models.NotFoundOr(err, "service")
		}
		to, err := ServiceChangeTarget(req.Kind, &svc, s.Now())
		if err != nil {
			return err
		}
		before := svc.Status
		if to != svc.Status {
			moved, err := s.services.TransitionService(ctx, scope, tx, svc.ID, to)
			if err != nil {
				return err
			}
			svc = *moved
			if err := eventlog.RecordEvent(tx, eventlog.NewEvent(eventServiceStatusChanged, svc.ID, map[string]any{
				"service": serviceEventData(&svc), "from": string(before), "to": string(to), "reason": req.Kind, "request_id": req.OperationID,
			})); err != nil {
				return err
			}
		}
		rec := &ServiceChange{Key: req.Key, ServiceID: svc.ID, OperationID: req.OperationID, Kind: req.Kind,
			Before: ServiceSnapshot{Status: before}, After: ServiceSnapshot{Status: svc.Status}, AppliedAt: s.Now()}
		if err := tx.Create(rec).Error; err != nil {
			return models.DBErr(err)
		}
		out = &svc
		return nil
	})
	if err != nil {
		return nil, models.AsError(err)
	}
	return out, nil
}

// RevertServiceChange undoes the status change recorded under key, once:
// the service moves back, with service.status_changed (reason: rollback).
// A change that was never made, changed nothing, or was undone already is
// left alone. Errors: SERVICE_CONFLICT (the service left the status the
// change gave it, or another change is under way), INVALID_STATE_TRANSITION.
func (s *Store) RevertServiceChange(ctx context.Context, scope models.Scope, key string) error {
	return asErrorOrNil(s.Tx(ctx, scope, func(tx *gorm.DB) error {
		var rec ServiceChange
		err := tx.Where("change_key = ?", key).Take(&rec).Error
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return nil
		}
		if err != nil {
			return models.DBErr(err)
		}
		if rec.RevertedAt != nil {
			return nil
		}
		if rec.Before.Status != rec.After.Status {
			var svc services.Service
			if err := tx.Where("id = ?", rec.ServiceID).Take(&svc).Error; err != nil {
				return models.NotFoundOr(err, "service")
			}
			if svc.Status != rec.After.Status || svc.PendingOperationID != "" {
				return models.Errorf(models.CodeServiceConflict, "service %s moved on (%s) since the change: it cannot be undone", svc.ID, svc.Status)
			}
			moved, err := s.services.TransitionService(ctx, scope, tx, svc.ID, rec.Before.Status)
			if err != nil {
				return err
			}
			if err := eventlog.RecordEvent(tx, eventlog.NewEvent(eventServiceStatusChanged, svc.ID, map[string]any{
				"service": serviceEventData(moved), "from": string(rec.After.Status), "to": string(rec.Before.Status), "reason": "rollback", "request_id": rec.OperationID,
			})); err != nil {
				return err
			}
		}
		return models.DBErr(tx.Model(&ServiceChange{}).Where("change_key = ?", key).Update("reverted_at", s.Now()).Error)
	}))
}

// asErrorOrNil returns nil for nil, else err as *Error.
func asErrorOrNil(err error) error {
	if err == nil {
		return nil
	}
	return models.AsError(err)
}

// serviceEventData is the `service` object of the events written here, the
// same summary as the services area's events.
func serviceEventData(svc *services.Service) map[string]any {
	return map[string]any{
		"id": svc.ID, "name": svc.Name, "status": string(svc.Status), "type": svc.Kind, "service_type": svc.ServiceType,
		"account_id": svc.AccountID, "bandwidth": svc.Bandwidth, "sla": svc.SLA, "location_id": svc.LocationID, "quantity": svc.Quantity,
	}
}

// RetireProvisionedService ends a service that a bulk rollback undid after
// it had been provisioned: operational (or degraded, down) →
// decommissioning → decommissioned, with a service.decommissioned event
// (reason: rollback, billing_ended_at), in one transaction; its network
// assignment is cleared, its billing ends (billing_ended_at, kept if already
// set, as a decommission does) and its decommission is recorded. A service
// already decommissioned, failed, or missing is left alone; one never
// activated is marked failed. Errors: SERVICE_CONFLICT (another change is
// under way), INVALID_STATE_TRANSITION (e.g. in maintenance).
func (s *Store) RetireProvisionedService(ctx context.Context, scope models.Scope, serviceID, opID string) error {
	svc, err := s.services.ServiceIn(ctx, scope, serviceID)
	if models.ErrorCode(err) == models.CodeNotFound {
		return nil
	}
	if err != nil {
		return err
	}
	switch svc.Status {
	case services.ServiceDecommissioned, services.ServiceFailed:
		return nil
	case services.ServicePending, services.ServiceProvisioning:
		return s.services.FailService(ctx, scope, serviceID, "rollback", opID)
	}
	if svc.PendingOperationID != "" {
		return models.Errorf(models.CodeServiceConflict, "operation %s is changing service %s: it cannot be rolled back now", svc.PendingOperationID, svc.ID)
	}
	return asErrorOrNil(s.Tx(ctx, scope, func(tx *gorm.DB) error {
		if svc.Status != services.ServiceDecommissioning {
			if _, err := s.services.MoveServiceTx(ctx, scope, tx, serviceID, services.ServiceDecommissioning, "rollback", opID); err != nil {
				return err
			}
		}
		moved, err := s.services.MoveServiceTx(ctx, scope, tx, serviceID, services.ServiceDecommissioned, "rollback", opID)
		if err != nil {
			return err
		}
		now := s.Now()
		updates := map[string]any{"ip_block": "", "gateway": "", "vlan_id": 0, "circuit_id": "",
			"decommissioned_at": now, "decommission_reason": "rollback of " + opID}
		billingEnded := now
		if moved.BillingEndedAt != nil {
			billingEnded = moved.BillingEndedAt.UTC()
		} else {
			updates["billing_ended_at"] = now
		}
		if err := tx.Model(&services.Service{}).Where("id = ?", serviceID).Updates(updates).Error; err != nil {
			return models.DBErr(err)
		}
		return eventlog.RecordEvent(tx, eventlog.NewEvent(eventServiceDecommissioned, serviceID, map[string]any{
			"service": serviceEventData(moved), "reason": "rollback", "request_id": opID, "billing_ended_at": models.Timestamp(billingEnded),
		}))
	}))
}

// CancelPendingOperations ends as cancelled the provisioning operations of
// ids that never started (still pending): bulk items that were skipped or
// cancelled before their workflow ran. Others are left alone.
func (s *Store) CancelPendingOperations(ctx context.Context, scope models.Scope, ids []string) error {
	for start := 0; start < len(ids); start += 500 {
		var pending []string
		err := s.In(ctx, scope).Model(&operations.Operation{}).Where("id IN ? AND status = ?", ids[start:min(start+500, len(ids))], operations.OpPending).Pluck("id", &pending).Error
		if err != nil {
			return models.DBErr(err)
		}
		for _, id := range pending {
			_, err := s.operations.FinishOperation(ctx, scope, id, operations.FinishInput{Status: operations.OpCancelled, Result: map[string]any{"reason": "the bulk operation ended before this item started"}})
			if err != nil && models.ErrorCode(err) != models.CodeInvalidStateTransition {
				return err
			}
		}
	}
	return nil
}

// DeleteBulkOperation removes a bulk operation whose workflow could not be
// started: the operation (still pending) and its items, and, for a retry,
// the mark it left on the retried operation.
func (s *Store) DeleteBulkOperation(ctx context.Context, scope models.Scope, id, retryOf string) error {
	return models.DBErr(s.Tx(ctx, scope, func(tx *gorm.DB) error {
		if err := tx.Where("operation_id = ?", id).Delete(&BulkItem{}).Error; err != nil {
			return err
		}
		if err := tx.Where("id = ? AND status = ?", id, operations.OpPending).Delete(&operations.Operation{}).Error; err != nil {
			return err
		}
		if retryOf == "" {
			return nil
		}
		_, err := s.operations.UpdateOperation(ctx, scope, tx, retryOf, func(orig *operations.Operation) error {
			if by, _ := orig.Result["retried_by"].(string); by == id {
				delete(orig.Result, "retried_by")
			}
			return nil
		})
		return err
	}))
}
