package api_test

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/operations"
)

// filterOperation stores an operation of tn in env, created at created,
// changed by edit.
func filterOperation(t *testing.T, h *harness, tn tenant, env models.Environment, prefix string, typ operations.OperationType, created time.Time, edit func(*operations.Operation)) string {
	t.Helper()
	op := operations.NewOperation(models.NewID(prefix), typ, models.NewID(models.PrefixService), "usr_filter", operations.ProvisioningSteps(false), nil)
	op.CreatedAt, op.UpdatedAt = created, created
	if edit != nil {
		edit(op)
	}
	if err := h.store.In(context.Background(), models.TenantScope(tn.org.ID, env)).Create(op).Error; err != nil {
		t.Fatal(err)
	}
	return op.ID
}

func TestOperationsFilter(t *testing.T) {
	h := newHarness(t)
	a := h.tenants[0]
	day := func(d int) time.Time { return time.Date(2026, 11, d, 9, 0, 0, 0, time.UTC) }
	done := func(st operations.OperationStatus, d int) func(*operations.Operation) {
		return func(op *operations.Operation) { at := day(d); op.Status, op.FinishedAt, op.UpdatedAt = st, &at, at }
	}
	prov := filterOperation(t, h, a, models.EnvLive, models.PrefixProvisioning, operations.OpTypeProvisioning, day(1), done(operations.OpCompleted, 2))
	failed := filterOperation(t, h, a, models.EnvLive, models.PrefixProvisioning, operations.OpTypeProvisioning, day(5), done(operations.OpFailed, 6))
	running := filterOperation(t, h, a, models.EnvLive, "mod", "modification", day(10), func(op *operations.Operation) {
		op.Status, op.CreatedBy = operations.OpInProgress, "ak_robot"
	})
	bulk := filterOperation(t, h, a, models.EnvLive, models.PrefixBulk, operations.OpTypeBulkProvision, day(12), func(op *operations.Operation) {
		op.ResourceID, op.Steps = "", nil
		done(operations.OpPartial, 13)(op)
	})
	report := filterOperation(t, h, a, models.EnvLive, models.PrefixReport, operations.OpTypeSupportReport, day(15), nil)
	var svc string
	if err := h.store.In(context.Background(), models.TenantScope(a.org.ID, models.EnvLive)).Model(&operations.Operation{}).Where("id = ?", prov).Pluck("resource_id", &svc).Error; err != nil {
		t.Fatal(err)
	}
	// Never listed to a's live key: another organization's, and a's sandbox.
	other := filterOperation(t, h, h.tenants[1], models.EnvLive, models.PrefixProvisioning, operations.OpTypeProvisioning, day(5), done(operations.OpFailed, 6))
	sandbox := filterOperation(t, h, a, models.EnvTest, models.PrefixProvisioning, operations.OpTypeProvisioning, day(5), done(operations.OpFailed, 6))

	checkFilters(t, h, a.liveKey, "/v1/operations", "operations", "request_id", []filterCase{
		{"status = failed", sortedIDs(failed)},
		{"status in (failed, partial, rolled_back)", sortedIDs(failed, bulk)},
		{"type = provisioning", sortedIDs(prov, failed)},
		{"type != provisioning and finished_at is null", sortedIDs(running, report)},
		{"finished_at is not null and updated_at < 2026-11-06", sortedIDs(prov)},
		{"created_at >= 2026-11-05 and created_at < 2026-11-12", sortedIDs(failed, running)},
		{"created_at = 2026-11-15", sortedIDs(report)},
		{"resource_id is null", sortedIDs(bulk)},
		{"resource_id = " + svc + " or created_by = ak_robot", sortedIDs(prov, running)},
		{"not (type in (provisioning, support_report)) and status != partial", sortedIDs(running)},
		{"created_at < 2000-01-01", nil},
	}, map[string]float64{
		"status = broken":              9,
		"colour = red":                 0,
		"kind = provisioning":          0,
		"created_by ~ robot":           11,
		"finished_at > later":          14,
		"type = provisioning and (a":   26,
		"type in (provisioning, diet)": 23,
	})
	for _, id := range filterIDs(t, h, a.liveKey, "/v1/operations", "limit=200", "operations", "request_id") {
		if id == other || id == sandbox {
			t.Errorf("listed %s: another tenant's or environment's operation", id)
		}
	}
	// The sandbox key sees its own environment's only; the other tenant its own.
	if got := filterIDs(t, h, a.testKey, "/v1/operations", "filter="+url.QueryEscape("status = failed"), "operations", "request_id"); !slices.Equal(got, []string{sandbox}) {
		t.Errorf("sandbox list: %v, want %v", got, []string{sandbox})
	}
	if got := filterIDs(t, h, h.tenants[1].liveKey, "/v1/operations", "filter="+url.QueryEscape("status = failed"), "operations", "request_id"); !slices.Equal(got, []string{other}) {
		t.Errorf("tenant B list: %v, want %v", got, []string{other})
	}
	// filter combines with the other parameters by and.
	if got := filterIDs(t, h, a.liveKey, "/v1/operations", "type=provisioning&filter="+url.QueryEscape("finished_at > 2026-11-03"), "operations", "request_id"); !slices.Equal(got, []string{failed}) {
		t.Errorf("type and filter: %v", got)
	}
	// A key with support:read alone sees the support reports alone.
	var key struct {
		APIKey struct{ Key string } `json:"api_key"`
	}
	h.do("POST", "/v1/auth/api-keys", h.adminKey, map[string]any{"name": "support only", "permissions": []string{"support:read"}, "organization_id": a.org.ID, "environment": "live"}).decode(http.StatusCreated, &key)
	if got := filterIDs(t, h, key.APIKey.Key, "/v1/operations", "filter="+url.QueryEscape("created_at > 2000-01-01"), "operations", "request_id"); !slices.Equal(got, []string{report}) {
		t.Errorf("support:read list: %v, want %v", got, []string{report})
	}
}
