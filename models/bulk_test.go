package models_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/automation"
	"github.com/telcoplatform/platform/models/billing"
	"github.com/telcoplatform/platform/models/eventlog"
	"github.com/telcoplatform/platform/models/identity"
	"github.com/telcoplatform/platform/models/operations"
	"github.com/telcoplatform/platform/models/services"
)

// bulkTenant creates an organization with a billing account and returns a
// customer principal of it acting in env, and the account.
func bulkTenant(t *testing.T, s *models.Store, name string, env models.Environment) (*models.Principal, *models.BillingAccount) {
	t.Helper()
	ctx := context.Background()
	org, err := identity.NewStore(s).CreateOrganization(ctx, admin(t, s), identity.OrganizationInput{Name: name, Plan: models.PlanBusiness})
	if err != nil {
		t.Fatal(err)
	}
	p := &models.Principal{ID: "ak_bulk", OrganizationID: org.ID, Environment: env, Role: models.RoleCustomer, Permissions: []string{"*"}}
	acct, err := billing.NewStore(s).CreateAccount(ctx, p, billing.AccountInput{Name: "Main", Currency: "USD", BillingEmail: "b@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	return p, acct
}

// runningService stores an operational service of p (from template
// internet-dedicated-1g at location loc) as a completed provisioning would.
func runningService(t *testing.T, s *models.Store, p *models.Principal, loc string) *services.Service {
	t.Helper()
	ctx := context.Background()
	o, scope, err := services.NewStore(s).PrepareTemplateOrder(ctx, p, services.TemplateInput{ServiceTemplate: "internet-dedicated-1g", LocationID: loc})
	if err != nil {
		t.Fatal(err)
	}
	opID, svcID := models.NewID(models.PrefixProvisioning), models.NewID(models.PrefixService)
	if err := operations.NewStore(s).CreateOperation(ctx, scope, operations.NewOperation(opID, operations.OpTypeProvisioning, svcID, p.ID, operations.ProvisioningSteps(false), nil)); err != nil {
		t.Fatal(err)
	}
	if _, err := services.NewStore(s).EnsureService(ctx, scope, svcID, opID, o); err != nil {
		t.Fatal(err)
	}
	if _, err := services.NewStore(s).TransitionService(ctx, scope, nil, svcID, services.ServiceProvisioning); err != nil {
		t.Fatal(err)
	}
	svc, err := services.NewStore(s).CompleteProvisioning(ctx, scope, opID, svcID)
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

func fieldsOf(t *testing.T, err error) map[string]string {
	t.Helper()
	e := models.AsError(err)
	if e.Code != models.CodeValidation {
		t.Fatalf("want VALIDATION_ERROR, got %v", err)
	}
	out := map[string]string{}
	for _, f := range e.Details["fields"].([]models.FieldIssue) {
		out[f.Field] = f.Issue
	}
	return out
}

func TestParseLocation(t *testing.T) {
	tests := []struct {
		in      string
		id      string
		zip     string
		wantErr bool
	}{
		{"loc_austin_congress", "loc_austin_congress", "", false},
		{"100 Congress Ave, Austin, TX 78701", "", "78701", false},
		{"Suite 4, 100 Congress Ave, Austin, tx 78701-1234", "", "78701-1234", false},
		{"100 Congress Ave, Austin, Texas 78701", "", "", true},
		{"100 Congress Ave Austin TX 78701", "", "", true},
		{"", "", "", true},
		{"loc_bad id", "", "", true},
	}
	for _, tc := range tests {
		id, loc, err := automation.ParseLocation("location", tc.in)
		if (err != nil) != tc.wantErr {
			t.Errorf("ParseLocation(%q): %v", tc.in, err)
			continue
		}
		if err != nil {
			if models.ErrorCode(err) != models.CodeValidation {
				t.Errorf("ParseLocation(%q): code %s", tc.in, models.ErrorCode(err))
			}
			continue
		}
		if id != tc.id || (tc.zip != "" && (loc == nil || loc.Zip != tc.zip || loc.State != "TX")) {
			t.Errorf("ParseLocation(%q) = %q, %+v", tc.in, id, loc)
		}
	}
}

func TestBulkStatusFromItems(t *testing.T) {
	tests := []struct {
		name string
		o    automation.BulkOutcome
		fin  automation.BulkFinish
		want operations.OperationStatus
	}{
		{"all completed", automation.BulkOutcome{Total: 3, Completed: 3}, automation.BulkFinish{}, operations.OpCompleted},
		{"some failed", automation.BulkOutcome{Total: 3, Completed: 2, Failed: 1}, automation.BulkFinish{}, operations.OpPartial},
		{"some skipped", automation.BulkOutcome{Total: 3, Completed: 2, Skipped: 1}, automation.BulkFinish{}, operations.OpPartial},
		{"all failed", automation.BulkOutcome{Total: 3, Failed: 3}, automation.BulkFinish{}, operations.OpFailed},
		{"rolled back", automation.BulkOutcome{Total: 3, RolledBack: 2, Failed: 1}, automation.BulkFinish{RolledBack: true}, operations.OpRolledBack},
		{"rollback failed", automation.BulkOutcome{Total: 3, Completed: 1, RollbackFailed: 1, RolledBack: 1, Failed: 1}, automation.BulkFinish{RolledBack: true}, operations.OpFailed},
		{"cancelled", automation.BulkOutcome{Total: 3, Completed: 1, Cancelled: 2}, automation.BulkFinish{Cancelled: true}, operations.OpCancelled},
	}
	for _, tc := range tests {
		if got := automation.BulkStatus(tc.o, tc.fin); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
	if (automation.BulkOptions{}).Window() != 1 || (automation.BulkOptions{Parallel: true}).Window() != automation.DefaultBulkConcurrency ||
		(automation.BulkOptions{Parallel: true, MaxConcurrency: 7}).Window() != 7 {
		t.Fatal("Window")
	}
}

func TestPrepareBulkProvision(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	p, acct := bulkTenant(t, s, "Bulk", models.EnvTest)
	ok := []automation.BulkProvisionItem{
		{Template: "internet-dedicated-1g", Location: "loc_sandbox_all"},
		{Template: "internet-business-100m", Location: "100 Congress Ave, Austin, TX 78701", Monitoring: "advanced"},
		{Template: "sandbox-fail-activate", Location: "loc_sandbox_all"},
	}
	plan, err := automation.NewStore(s).PrepareBulkProvision(ctx, p, automation.BulkProvisionInput{Items: ok, Options: automation.BulkOptions{Parallel: true}})
	if err != nil {
		t.Fatal(err)
	}
	if plan.Type != operations.OpTypeBulkProvision || plan.Scope.OrganizationID != p.OrganizationID || plan.Scope.Environment != models.EnvTest || len(plan.Items) != 3 {
		t.Fatalf("plan %+v", plan)
	}
	for i, it := range plan.Items {
		if it.Position != i || !models.HasPrefix(it.ServiceID, "svc") || !models.HasPrefix(it.ChildID, "prov") || it.Order == nil || it.Order.AccountID != acct.ID {
			t.Fatalf("item %d: %+v", i, it)
		}
	}
	if plan.Items[1].Order.LocationID != "loc_austin_congress" || plan.Items[1].Order.Monitoring != "advanced" {
		t.Fatalf("postal location or customization lost: %+v", plan.Items[1].Order)
	}

	t.Run("invalid items name their fields", func(t *testing.T) {
		_, err := automation.NewStore(s).PrepareBulkProvision(ctx, p, automation.BulkProvisionInput{Items: []automation.BulkProvisionItem{
			ok[0], {Template: "nope", Location: "loc_sandbox_all"}, {Template: "internet-dedicated-1g", Location: "Austin"},
			{Template: "internet-dedicated-1g", Location: "loc_sandbox_all", Redundancy: "triple"},
		}})
		f := fieldsOf(t, err)
		for _, want := range []string{"services[1].template", "services[2].location", "services[3].customizations.redundancy"} {
			if f[want] == "" {
				t.Errorf("no issue for %s: %v", want, f)
			}
		}
	})
	t.Run("unserviceable items are 422 with every failing item", func(t *testing.T) {
		_, err := automation.NewStore(s).PrepareBulkProvision(ctx, p, automation.BulkProvisionInput{Items: []automation.BulkProvisionItem{
			ok[0], {Template: "internet-dedicated-1g", Location: "9 Nowhere Rd, Testville, CA 94999"},
			{Template: "internet-dedicated-1g", Location: "loc_sandbox_business_only"},
		}})
		e := models.AsError(err)
		items, _ := e.Details["items"].([]any)
		if e.Code != models.CodeLocationNotServiceable || e.Details["index"] != 1 || e.Details["failed_items"] != 2 || !strings.HasPrefix(e.Message, "services[1]") {
			t.Fatalf("%v %v (%d items)", e, e.Details, len(items))
		}
	})
	t.Run("bounds", func(t *testing.T) {
		many := make([]automation.BulkProvisionItem, automation.MaxBulkItems+1)
		for i := range many {
			many[i] = ok[0]
		}
		if f := fieldsOf(t, func() error {
			_, err := automation.NewStore(s).PrepareBulkProvision(ctx, p, automation.BulkProvisionInput{Items: many})
			return err
		}()); f["services"] == "" {
			t.Fatalf("1,001 items: %v", f)
		}
		if f := fieldsOf(t, func() error {
			_, err := automation.NewStore(s).PrepareBulkProvision(ctx, p, automation.BulkProvisionInput{})
			return err
		}()); f["services"] == "" {
			t.Fatalf("no items: %v", f)
		}
		_, err := automation.NewStore(s).PrepareBulkProvision(ctx, p, automation.BulkProvisionInput{Items: ok[:1], Options: automation.BulkOptions{Parallel: true, MaxConcurrency: 99}})
		if f := fieldsOf(t, err); f["orchestration.max_concurrency"] == "" {
			t.Fatalf("max_concurrency: %v", f)
		}
	})
}

func TestBulkOperationLifecycleAndRetry(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	p, _ := bulkTenant(t, s, "Bulk", models.EnvTest)
	items := make([]automation.BulkProvisionItem, 5)
	for i := range items {
		items[i] = automation.BulkProvisionItem{Template: "internet-dedicated-1g", Location: "loc_sandbox_all"}
	}
	plan, err := automation.NewStore(s).PrepareBulkProvision(ctx, p, automation.BulkProvisionInput{Items: items, Options: automation.BulkOptions{Parallel: true, MaxConcurrency: 3}})
	if err != nil {
		t.Fatal(err)
	}
	op, err := automation.NewStore(s).CreateBulkOperation(ctx, plan, "bulk_lifecycle", p.ID)
	if err != nil {
		t.Fatal(err)
	}
	scope := plan.Scope
	if op.Status != operations.OpPending || len(op.Items) != 5 || op.Items[2].ID != plan.Items[2].ServiceID || op.Progress().Total != 5 {
		t.Fatalf("operation %+v", op)
	}
	page, next, err := automation.NewStore(s).BulkItems(ctx, scope, "bulk_lifecycle", 0, 2, automation.ItemPending)
	if err != nil || len(page) != 2 || next != 2 || page[1].Position != 1 || page[1].Order == nil {
		t.Fatalf("page %+v next %d %v", page, next, err)
	}
	for range 2 {
		if err := automation.NewStore(s).EnsureChildOperations(ctx, scope, p.ID, page); err != nil {
			t.Fatal(err)
		}
	}
	child, err := operations.NewStore(s).OperationIn(ctx, scope, page[0].ChildID)
	if err != nil || child.Type != operations.OpTypeProvisioning || child.ResourceID != page[0].ServiceID || child.Status != operations.OpPending {
		t.Fatalf("child %+v %v", child, err)
	}
	fail := &operations.OperationError{Code: models.CodeProvisioningFailed, Message: "activate failed"}
	_, err = automation.NewStore(s).RecordBulkItems(ctx, scope, "bulk_lifecycle", []automation.ItemUpdate{
		{Position: 0, Status: automation.ItemInProgress}, {Position: 1, Status: automation.ItemInProgress},
		{Position: 0, Status: automation.ItemCompleted}, {Position: 1, Status: automation.ItemFailed, Error: fail},
		{Position: 0, Status: automation.ItemInProgress}, // a late start never moves an ended item back
		{Position: 9, Status: automation.ItemCompleted},  // out of range: ignored
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := automation.NewStore(s).BulkItems(ctx, scope, "bulk_lifecycle", 0, 10, automation.ItemCompleted); err != nil {
		t.Fatal(err)
	}
	got, _ := operations.NewStore(s).OperationIn(ctx, scope, "bulk_lifecycle")
	if got.Status != operations.OpInProgress || got.Items[0].Status != automation.ItemCompleted || got.Items[1].Status != automation.ItemFailed {
		t.Fatalf("items %+v", got.Items)
	}
	if pr := got.Progress(); pr.Completed != 1 || pr.Failed != 1 || pr.Percent != 20 {
		t.Fatalf("progress %+v", pr)
	}
	for range 2 {
		fin, err := automation.NewStore(s).FinishBulk(ctx, scope, "bulk_lifecycle", automation.BulkFinish{})
		if err != nil {
			t.Fatal(err)
		}
		if fin.Status != operations.OpPartial || fmt.Sprint(fin.Result["skipped"]) != "3" || fmt.Sprint(fin.Result["completed"]) != "1" || fin.Error == nil ||
			fin.Error.Code != models.CodeProvisioningFailed || fin.Result["retry_url"] != "/v1/operations/bulk_lifecycle/retry" || fin.FinishedAt == nil {
			t.Fatalf("finished %+v %+v", fin, fin.Error)
		}
	}
	all, _, _ := automation.NewStore(s).BulkItems(ctx, scope, "bulk_lifecycle", 0, 5)
	if err := automation.NewStore(s).EnsureChildOperations(ctx, scope, p.ID, all); err != nil {
		t.Fatal(err)
	}
	skipped, _, _ := automation.NewStore(s).BulkItems(ctx, scope, "bulk_lifecycle", 0, 5, automation.ItemSkipped)
	ids := []string{}
	for _, it := range skipped {
		ids = append(ids, it.ChildID)
	}
	if err := automation.NewStore(s).CancelPendingOperations(ctx, scope, ids); err != nil {
		t.Fatal(err)
	}
	for _, it := range all {
		c, _ := operations.NewStore(s).OperationIn(ctx, scope, it.ChildID)
		if want := map[bool]operations.OperationStatus{true: operations.OpCancelled, false: operations.OpPending}[it.Position >= 2]; c.Status != want {
			t.Fatalf("child of item %d is %s, want %s", it.Position, c.Status, want)
		}
	}

	retry, err := automation.NewStore(s).PrepareBulkRetry(ctx, p, "bulk_lifecycle", nil)
	if err != nil {
		t.Fatal(err)
	}
	if retry.RetryOf != "bulk_lifecycle" || len(retry.Items) != 4 || *retry.Items[0].SourcePosition != 1 || retry.Options.Window() != 3 ||
		retry.Items[0].ServiceID == plan.Items[1].ServiceID {
		t.Fatalf("retry plan %+v", retry)
	}
	again, err := automation.NewStore(s).CreateBulkOperation(ctx, retry, "bulk_retry", p.ID)
	if err != nil || again.Input["retry_of"] != "bulk_lifecycle" {
		t.Fatalf("%+v %v", again, err)
	}
	orig, _ := operations.NewStore(s).OperationIn(ctx, scope, "bulk_lifecycle")
	if orig.Result["retried_by"] != "bulk_retry" {
		t.Fatalf("retried_by %v", orig.Result)
	}
	if _, err := automation.NewStore(s).PrepareBulkRetry(ctx, p, "bulk_lifecycle", nil); models.ErrorCode(err) != models.CodeInvalidStateTransition {
		t.Fatalf("second retry: %v", err)
	}
	if _, err := automation.NewStore(s).CreateBulkOperation(ctx, retry, "bulk_retry2", p.ID); models.ErrorCode(err) != models.CodeInvalidStateTransition {
		t.Fatalf("a racing second retry: %v", err)
	}
	if err := automation.NewStore(s).DeleteBulkOperation(ctx, scope, "bulk_retry", "bulk_lifecycle"); err != nil {
		t.Fatal(err)
	}
	if orig, _ := operations.NewStore(s).OperationIn(ctx, scope, "bulk_lifecycle"); orig.Result["retried_by"] != nil {
		t.Fatalf("deleting the retry must free the original: %v", orig.Result)
	}
	if _, err := operations.NewStore(s).OperationIn(ctx, scope, "bulk_retry"); models.ErrorCode(err) != models.CodeNotFound {
		t.Fatalf("deleted retry: %v", err)
	}
	t.Run("what cannot be retried", func(t *testing.T) {
		if _, err := automation.NewStore(s).PrepareBulkRetry(ctx, p, page[0].ChildID, nil); models.ErrorCode(err) != models.CodeValidation {
			t.Fatalf("a provisioning operation: %v", err)
		}
		plan2, _ := automation.NewStore(s).PrepareBulkProvision(ctx, p, automation.BulkProvisionInput{Items: items[:1]})
		if _, err := automation.NewStore(s).CreateBulkOperation(ctx, plan2, "bulk_running", p.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := automation.NewStore(s).PrepareBulkRetry(ctx, p, "bulk_running", nil); models.ErrorCode(err) != models.CodeInvalidStateTransition {
			t.Fatalf("a running operation: %v", err)
		}
		other, _ := bulkTenant(t, s, "Other", models.EnvTest)
		if _, err := automation.NewStore(s).PrepareBulkRetry(ctx, other, "bulk_lifecycle", nil); models.ErrorCode(err) != models.CodeNotFound {
			t.Fatalf("another tenant: %v", err)
		}
	})
}

func TestStatusChangesAreAppliedOnceAndReverted(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	p, _ := bulkTenant(t, s, "Changes", models.EnvLive)
	scope := p.OwnScope()
	svc := runningService(t, s, p, "loc_austin_congress")

	suspend := automation.ChangeRequest{Key: automation.ChangeKey("bulk_y", 0), OperationID: "bulk_y", ServiceID: svc.ID, Kind: automation.ChangeSuspend}
	for range 2 {
		got, err := automation.NewStore(s).ApplyServiceChange(ctx, scope, suspend)
		if err != nil || got.Status != services.ServiceMaintenance {
			t.Fatalf("suspend: %+v %v", got, err)
		}
	}
	evs, _ := eventlog.NewStore(s).EventsFor(ctx, scope, svc.ID)
	// one for the provisioning (provisioning → operational), one for the suspension
	if n := countEvents(evs, "service.status_changed"); n != 2 {
		t.Fatalf("%d service.status_changed events, want 2 (provisioned, then one change applied twice)", n)
	}
	last := evs[len(evs)-1]
	if last.Data["from"] != "operational" || last.Data["to"] != "maintenance" || last.Data["reason"] != "suspend" || last.Data["request_id"] != "bulk_y" {
		t.Fatalf("event %+v", last.Data)
	}
	// A suspended service cannot be changed (the services area's rule).
	if _, _, _, err := services.NewStore(s).PrepareServiceUpdate(ctx, p, svc.ID, automation.ServiceChanges{Name: "x"}.UpdateInput()); models.ErrorCode(err) != models.CodeServiceMaintenance {
		t.Fatalf("modifying a suspended service: %v", err)
	}
	if _, err := automation.NewStore(s).ServiceForChange(ctx, scope, automation.ChangeResume, svc.ID); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := automation.NewStore(s).RevertServiceChange(ctx, scope, suspend.Key); err != nil {
			t.Fatal(err)
		}
	}
	back, _ := services.NewStore(s).GetService(ctx, p, svc.ID)
	if back.Status != services.ServiceOperational {
		t.Fatalf("suspension not reverted: %s", back.Status)
	}
	evs, _ = eventlog.NewStore(s).EventsFor(ctx, scope, svc.ID)
	if n := countEvents(evs, "service.status_changed"); n != 3 {
		t.Fatalf("%d service.status_changed events, want 3 (provisioned, suspended, reverted)", n)
	}
	// Resuming a running service changes nothing (and writes no event).
	if got, err := automation.NewStore(s).ApplyServiceChange(ctx, scope, automation.ChangeRequest{Key: "k3", OperationID: "bulk_r", ServiceID: svc.ID, Kind: automation.ChangeResume}); err != nil || got.Status != services.ServiceOperational {
		t.Fatalf("resuming a running service: %v", err)
	}
	if evs, _ := eventlog.NewStore(s).EventsFor(ctx, scope, svc.ID); countEvents(evs, "service.status_changed") != 3 {
		t.Fatal("a no-op resume wrote an event")
	}

	t.Run("a modification runs as the services area's change", func(t *testing.T) {
		c, err := automation.NewStore(s).PrepareChangeOperation(ctx, scope, p.ID, "mod_bulkitem0", svc.ID, automation.ServiceChanges{SLA: "enterprise", Monitoring: "advanced"}.UpdateInput(), map[string]any{"bulk_request_id": "bulk_m"})
		if err != nil {
			t.Fatal(err)
		}
		if c.Noop || c.Operation.ID != "mod_bulkitem0" || c.Operation.Type != services.OpTypeModification || c.Update.SLA == nil || *c.Update.SLA != "enterprise" ||
			c.Operation.Input["bulk_request_id"] != "bulk_m" {
			t.Fatalf("change %+v", c)
		}
		again, err := automation.NewStore(s).PrepareChangeOperation(ctx, scope, p.ID, "mod_bulkitem0", svc.ID, automation.ServiceChanges{SLA: "enterprise"}.UpdateInput(), nil)
		if err != nil || again.Operation.ID != "mod_bulkitem0" || again.Update.SLA == nil {
			t.Fatalf("a retry must find the operation: %+v %v", again, err)
		}
		// The change claims the service: nothing else changes it meanwhile.
		if _, err := automation.NewStore(s).ApplyServiceChange(ctx, scope, automation.ChangeRequest{Key: "k4", OperationID: "bulk_s", ServiceID: svc.ID, Kind: automation.ChangeSuspend}); models.ErrorCode(err) != models.CodeServiceConflict {
			t.Fatalf("suspending a service under change: %v", err)
		}
		if _, err := services.NewStore(s).ApplyServiceUpdate(ctx, scope, svc.ID, "mod_bulkitem0", c.Update, true); err != nil {
			t.Fatal(err)
		}
		back, ok, err := automation.NewStore(s).ReverseChange(ctx, scope, "mod_bulkitem0")
		if err != nil || !ok || back.SLA == nil || *back.SLA != svc.SLA || back.Configuration["monitoring"] != svc.Monitoring {
			t.Fatalf("reverse %+v %v %v", back, ok, err)
		}
		noop, err := automation.NewStore(s).PrepareChangeOperation(ctx, scope, p.ID, "mod_bulkitem1", svc.ID, automation.ServiceChanges{SLA: "enterprise"}.UpdateInput(), nil)
		if err != nil || !noop.Noop {
			t.Fatalf("a change to the current values: %+v %v", noop, err)
		}
		if _, ok, _ := automation.NewStore(s).ReverseChange(ctx, scope, "mod_never"); ok {
			t.Fatal("nothing to reverse for an unknown change")
		}
	})

	if err := automation.NewStore(s).RetireProvisionedService(ctx, scope, svc.ID, "bulk_rb"); err != nil {
		t.Fatal(err)
	}
	if err := automation.NewStore(s).RetireProvisionedService(ctx, scope, svc.ID, "bulk_rb"); err != nil {
		t.Fatal(err)
	}
	back, _ = services.NewStore(s).GetService(ctx, p, svc.ID)
	evs, _ = eventlog.NewStore(s).EventsFor(ctx, scope, svc.ID)
	if back.Status != services.ServiceDecommissioned || back.IPBlock != "" || back.BillingEndedAt == nil || back.DecommissionedAt == nil || countEvents(evs, "service.decommissioned") != 1 {
		t.Fatalf("retired: %+v", back)
	}
	// Billing ends as a decommission ends it, and the event says when.
	for _, ev := range evs {
		if ev.Type == "service.decommissioned" && (ev.Data["reason"] != "rollback" || ev.Data["request_id"] != "bulk_rb" ||
			ev.Data["billing_ended_at"] != models.Timestamp(*back.BillingEndedAt) || !back.BillingEndedAt.Equal(*back.DecommissionedAt)) {
			t.Fatalf("retired: billing ended %v, decommissioned %v, event %+v", back.BillingEndedAt, back.DecommissionedAt, ev)
		}
	}
	if _, err := automation.NewStore(s).ServiceForChange(ctx, scope, automation.ChangeSuspend, svc.ID); models.ErrorCode(err) != models.CodeInvalidStateTransition {
		t.Fatalf("suspending a decommissioned service: %v", err)
	}
}

func countEvents(evs []eventlog.Event, typ string) int {
	n := 0
	for _, e := range evs {
		if e.Type == typ {
			n++
		}
	}
	return n
}

func TestPrepareBulkModifyAndStatus(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	p, _ := bulkTenant(t, s, "A", models.EnvLive)
	other, _ := bulkTenant(t, s, "B", models.EnvLive)
	a1, a2 := runningService(t, s, p, "loc_austin_congress"), runningService(t, s, p, "loc_austin_congress")
	b1 := runningService(t, s, other, "loc_austin_congress")

	plan, err := automation.NewStore(s).PrepareBulkModify(ctx, p, automation.BulkModifyInput{
		Items:   []automation.BulkModifyItem{{ServiceID: a1.ID}, {ServiceID: a2.ID, Changes: automation.ServiceChanges{SLA: "enterprise"}}},
		Changes: automation.ServiceChanges{Monitoring: "advanced", SLA: "standard"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if c := plan.Items[1].Changes; c.SLA != "enterprise" || c.Monitoring != "advanced" || plan.Items[0].Changes.SLA != "standard" {
		t.Fatalf("merged changes %+v %+v", plan.Items[0].Changes, c)
	}
	_, err = automation.NewStore(s).PrepareBulkModify(ctx, p, automation.BulkModifyInput{Items: []automation.BulkModifyItem{
		{ServiceID: a1.ID, Changes: automation.ServiceChanges{SLA: "gold"}}, {ServiceID: a1.ID, Changes: automation.ServiceChanges{Name: "x"}},
		{ServiceID: b1.ID, Changes: automation.ServiceChanges{Name: "x"}}, {ServiceID: a2.ID},
	}})
	f := fieldsOf(t, err)
	for _, want := range []string{"services[0].changes.sla", "services[1].service_id", "services[2].service_id", "services[3].changes"} {
		if f[want] == "" {
			t.Errorf("no issue for %s: %v", want, f)
		}
	}
	if strings.Contains(fmt.Sprint(f), other.OrganizationID) {
		t.Fatal("the error reveals another tenant")
	}

	st, err := automation.NewStore(s).PrepareBulkStatus(ctx, p, automation.BulkStatusInput{ServiceIDs: []string{a1.ID, a2.ID}, Action: automation.ActionSuspend})
	if err != nil || len(st.Items) != 2 || st.Items[1].Action != automation.ActionSuspend || st.Type != operations.OpTypeBulkStatus {
		t.Fatalf("%+v %v", st, err)
	}
	if f := fieldsOf(t, func() error {
		_, err := automation.NewStore(s).PrepareBulkStatus(ctx, p, automation.BulkStatusInput{ServiceIDs: []string{a1.ID}, Action: "reboot"})
		return err
	}()); f["action"] == "" {
		t.Fatalf("bad action: %v", f)
	}
	entries, err := automation.NewStore(s).BulkServiceStatuses(ctx, p, []string{a1.ID, b1.ID, "svc_nope"})
	if err != nil || !entries[0].Found || entries[0].Status != services.ServiceOperational || entries[1].Found || entries[2].Found {
		t.Fatalf("%+v %v", entries, err)
	}
	ids := slices.Repeat([]string{a1.ID}, automation.MaxBulkItems+1)
	if f := fieldsOf(t, func() error { _, err := automation.NewStore(s).BulkServiceStatuses(ctx, p, ids); return err }()); f["service_ids"] == "" {
		t.Fatalf("too many ids: %v", f)
	}
}
