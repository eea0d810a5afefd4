package reports_test

import (
	"context"
	"encoding/json"
	"io"
	"net/url"
	"testing"
	"time"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/analytics/builder"
	"github.com/telcoplatform/platform/models/analytics/reports"
	"github.com/telcoplatform/platform/models/eventlog"
	"github.com/telcoplatform/platform/models/operations"
	"github.com/telcoplatform/platform/models/support"
	"github.com/telcoplatform/platform/testenv"
)

// TestDefinitionLifecycle saves and replaces a definition, which only its
// organization's environment sees.
func TestDefinitionLifecycle(t *testing.T) {
	ctx := context.Background()
	store, seeded := testenv.SeededStore(t)
	s := reports.NewStore(store, testenv.Blobs(t))
	p := &models.Principal{ID: "ak_1", OrganizationID: seeded.Demo.ID, Environment: models.EnvLive, Role: models.RoleCustomer, Permissions: []string{"*"}}
	d, err := s.CreateDefinition(ctx, p, reports.DefinitionInput{Name: "a", Request: reports.Request{Query: builder.Definition{Dataset: "tickets", Metrics: []string{"count"}}}})
	if err != nil {
		t.Fatal(err)
	}
	_, u, err := s.UpdateDefinition(ctx, p, d.ID, reports.DefinitionInput{Name: "b", Request: reports.Request{Query: builder.Definition{Dataset: "tickets", Metrics: []string{"count"}, From: "2026-01-01", To: "2026-02-01"}}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.GetDefinition(ctx, p, d.ID)
	if err != nil || got.Name != "b" || got.Query.From != "2026-01-01" || got.Query.Period != "" || u.CreatedAt.IsZero() {
		t.Fatalf("replaced: %v %+v", err, got)
	}
	other := &models.Principal{ID: "ak_2", OrganizationID: seeded.Provider.ID, Environment: models.EnvLive, Role: models.RoleCustomer, Permissions: []string{"*"}}
	if _, err := s.GetDefinition(ctx, other, d.ID); models.ErrorCode(err) != models.CodeNotFound {
		t.Fatalf("another organization reads it: %v", err)
	}
	sandbox := *p
	sandbox.Environment = models.EnvTest
	if _, err := s.GetDefinition(ctx, &sandbox, d.ID); models.ErrorCode(err) != models.CodeNotFound {
		t.Fatalf("the sandbox reads it: %v", err)
	}
}

// tickets opens n tickets of priority for p through the support store.
func openTickets(t *testing.T, store *models.Store, p *models.Principal, priority string, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		if _, err := support.NewStore(store).CreateTicket(context.Background(), p, support.TicketInput{Title: "t", Description: "d", Category: "network", Priority: priority}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestScheduledRunLifecycle prepares the runs of a schedule's firings (once
// per firing, none once the definition is gone), generates and completes
// them with e-mail and webhook delivery, fails one, and reads the file
// back through its signed link.
func TestScheduledRunLifecycle(t *testing.T) {
	ctx := context.Background()
	store, seeded := testenv.SeededStore(t)
	s := reports.NewStore(store, testenv.Blobs(t))
	p := &models.Principal{ID: "ak_1", OrganizationID: seeded.Demo.ID, Environment: models.EnvLive, Role: models.RoleCustomer, Permissions: []string{"*"}}
	openTickets(t, store, p, "high", 2)
	openTickets(t, store, &models.Principal{ID: "ak_2", OrganizationID: seeded.Provider.ID, Environment: models.EnvLive, Role: models.RoleCustomer, Permissions: []string{"*"}}, "low", 1)
	hour := 7
	d, err := s.CreateDefinition(ctx, p, reports.DefinitionInput{Name: "daily", Request: reports.Request{Format: "json", DeliveryMethod: "email",
		NotificationEmail: "noc@demo.example", Query: builder.Definition{Dataset: "tickets", Metrics: []string{"count"}, Dimensions: []string{"priority"}, Period: "last_7_days"}},
		Schedule: &reports.ScheduleInput{Frequency: "weekly", Weekday: "friday", Hour: &hour, Timezone: "Europe/Paris"}})
	if err != nil {
		t.Fatal(err)
	}
	if d.ScheduleID != reports.ScheduleID(d.ID) || d.Schedule.WeekdayNumber() != 5 || d.Schedule.Minute != 0 || d.AllOrganizations {
		t.Fatalf("definition %+v %+v", d, d.Schedule)
	}
	now := time.Now().UTC()
	id, _, err := s.PrepareScheduledRun(ctx, d.ID, "analytics-report-x-2026", now)
	if err != nil || id == "" {
		t.Fatal(id, err)
	}
	again, _, err := s.PrepareScheduledRun(ctx, d.ID, "analytics-report-x-2026", now.Add(time.Minute))
	if err != nil || again != id {
		t.Fatalf("a retried firing made %q, want %q (%v)", again, id, err)
	}
	got, _ := s.GetDefinition(ctx, p, d.ID)
	if got.LastRunID != id || got.LastRunAt == nil {
		t.Fatalf("last run %+v", got)
	}
	res, err := s.GenerateRun(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if res.RowCount != 1 || len(res.Columns) != 2 {
		t.Fatalf("result %+v", res)
	}
	links, err := s.Links(ctx, "https://api.example")
	if err != nil {
		t.Fatal(err)
	}
	expires := now.Add(time.Hour).Truncate(time.Second)
	link := links(id, expires)
	if err := s.CompleteRun(ctx, id, res, link, expires); err != nil {
		t.Fatal(err)
	}
	if err := s.CompleteRun(ctx, id, res, link, expires); err != nil {
		t.Fatalf("completing again: %v", err)
	}
	var mails []eventlog.ContactNotification
	store.In(ctx, models.SystemScope()).Where("recipient = ?", "noc@demo.example").Find(&mails)
	if len(mails) != 1 || mails[0].Template != "analytics_report_ready" {
		t.Fatalf("mails %+v", mails)
	}
	u, _ := url.Parse(link)
	_, spec, r, err := s.OpenDownload(ctx, id, u.Query().Get("expires"), u.Query().Get("signature"), now)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(r)
	r.Close()
	var doc struct {
		Report struct {
			Rows     []map[string]any `json:"rows"`
			RowCount int              `json:"row_count"`
		} `json:"report"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil || spec.Format != "json" || doc.Report.RowCount != 1 || doc.Report.Rows[0]["priority"] != "high" || doc.Report.Rows[0]["count"] != 2.0 {
		t.Fatalf("file %v %s", err, raw)
	}
	if _, _, _, err := s.OpenDownload(ctx, id, u.Query().Get("expires"), u.Query().Get("signature"), expires.Add(time.Second)); models.ErrorCode(err) != models.CodeTokenExpired {
		t.Fatalf("expired link: %v", err)
	}
	if _, _, _, err := s.OpenDownload(ctx, id, u.Query().Get("expires"), "00"+u.Query().Get("signature")[2:], now); models.ErrorCode(err) != models.CodeInvalidSignature {
		t.Fatalf("tampered link: %v", err)
	}

	// Webhook delivery: the link goes in the event. A failed run records analytics_report.failed.
	if _, _, err := s.UpdateDefinition(ctx, p, d.ID, reports.DefinitionInput{Name: "daily", Request: reports.Request{DeliveryMethod: "webhook",
		Query: builder.Definition{Dataset: "tickets", Metrics: []string{"count"}}}, Schedule: &reports.ScheduleInput{Frequency: "daily"}}); err != nil {
		t.Fatal(err)
	}
	hooked, _, err := s.PrepareScheduledRun(ctx, d.ID, "analytics-report-x-2027", now)
	if err != nil {
		t.Fatal(err)
	}
	res, err = s.GenerateRun(ctx, hooked)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CompleteRun(ctx, hooked, res, "https://api.example/link", expires); err != nil {
		t.Fatal(err)
	}
	failed, _, _ := s.PrepareScheduledRun(ctx, d.ID, "analytics-report-x-2028", now)
	if err := s.FailRun(ctx, failed, operations.OpFailed, reports.StepQuery, &operations.OperationError{Code: "INTERNAL_ERROR", Message: "boom"}); err != nil {
		t.Fatal(err)
	}
	events := map[string]map[string]any{}
	for _, rid := range []string{id, hooked, failed} {
		evs, err := eventlog.NewStore(store).EventsFor(ctx, p.OwnScope(), rid)
		if err != nil || len(evs) != 1 {
			t.Fatalf("events of %s: %v %+v", rid, err, evs)
		}
		events[evs[0].Type+" "+rid] = evs[0].Data["report"].(map[string]any)
	}
	if e := events["analytics_report.completed "+id]; e["download_url"] != nil || e["scheduled"] != true || e["definition_id"] != d.ID {
		t.Fatalf("e-mailed run's event %+v", e)
	}
	if e := events["analytics_report.completed "+hooked]; e["download_url"] != "https://api.example/link" {
		t.Fatalf("webhook run's event %+v", e)
	}
	if e := events["analytics_report.failed "+failed]; e["status"] != "failed" {
		t.Fatalf("failed run's event %+v", e)
	}

	// A deleted definition's firing runs nothing.
	if _, err := s.DeleteDefinition(ctx, p, d.ID); err != nil {
		t.Fatal(err)
	}
	if id, _, err := s.PrepareScheduledRun(ctx, d.ID, "analytics-report-x-2029", now); err != nil || id != "" {
		t.Fatalf("a deleted definition ran: %q %v", id, err)
	}
}
