package support_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/identity"
	"github.com/telcoplatform/platform/models/support"
	"github.com/telcoplatform/platform/testenv"
)

// trackerFixture is a store with the demo customer, provider staff and
// one tracker integration of the customer.
type trackerFixture struct {
	ctx      context.Context
	core     *models.Store
	s        *support.Store
	customer *models.Principal
	staff    *models.Principal
	c        *support.TrackerIntegration
}

const trackerToken = "secret-token-XYZ9"

func newTrackerFixture(t *testing.T) *trackerFixture {
	t.Helper()
	ctx := context.Background()
	core, seeded := testenv.SeededStore(t)
	prov, err := identity.NewStore(core).EnsureProviderOrganization(ctx)
	if err != nil {
		t.Fatal(err)
	}
	f := &trackerFixture{ctx: ctx, core: core, s: support.NewStore(core),
		customer: &models.Principal{ID: "ak_cust", OrganizationID: seeded.Demo.ID, Environment: models.EnvLive, Role: models.RoleCustomer, Permissions: []string{"*"}},
		staff:    &models.Principal{ID: "ak_staff", OrganizationID: prov.ID, Environment: models.EnvLive, Role: models.RoleAgent, Permissions: []string{"*"}}}
	f.c, err = f.s.CreateTrackerIntegration(ctx, f.customer, support.TrackerSpec{TrackerURL: "https://tracker.example.com/", Username: " bot ",
		APIToken: trackerToken, ProjectKey: "OPS", CreateIssues: true, SyncComments: true, PriorityMapping: support.PriorityMapping{Critical: "P1"}, Active: true})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *trackerFixture) ticket(t *testing.T, priority string) *support.Ticket {
	t.Helper()
	tk, err := f.s.CreateTicket(f.ctx, f.customer, support.TicketInput{Title: "Link down", Description: "d", Category: "general", Priority: priority})
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

// TestTrackerIntegrationValidation: each bad field is a VALIDATION_ERROR
// on its own name; good ones pass.
func TestTrackerIntegrationValidation(t *testing.T) {
	f := newTrackerFixture(t)
	good := support.TrackerSpec{TrackerURL: "https://t.example.com", Username: "bot", APIToken: "tok", ProjectKey: "OPS", Active: true}
	for _, tc := range []struct {
		name  string
		edit  func(*support.TrackerSpec)
		field string // "" when valid
	}{
		{"valid", func(*support.TrackerSpec) {}, ""},
		{"project with digits", func(s *support.TrackerSpec) { s.ProjectKey = "NET2_X" }, ""},
		{"blank username", func(s *support.TrackerSpec) { s.Username = "  " }, "username"},
		{"long username", func(s *support.TrackerSpec) { s.Username = strings.Repeat("u", 201) }, "username"},
		{"blank token", func(s *support.TrackerSpec) { s.APIToken = " " }, "api_token"},
		{"token with a newline", func(s *support.TrackerSpec) { s.APIToken = "a\nb" }, "api_token"},
		{"lower-case project", func(s *support.TrackerSpec) { s.ProjectKey = "ops" }, "project_key"},
		{"one-letter project", func(s *support.TrackerSpec) { s.ProjectKey = "O" }, "project_key"},
		{"long project", func(s *support.TrackerSpec) { s.ProjectKey = "ABCDEFGHIJK" }, "project_key"},
		{"long priority name", func(s *support.TrackerSpec) { s.PriorityMapping.Low = strings.Repeat("p", 61) }, "sync_settings.priority_mapping.low"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := good
			tc.edit(&spec)
			c, err := f.s.CreateTrackerIntegration(f.ctx, f.customer, spec)
			if tc.field == "" {
				if err != nil {
					t.Fatal(err)
				}
				if err := f.s.DeleteTrackerIntegration(f.ctx, f.customer, c.ID); err != nil {
					t.Fatal(err)
				}
				return
			}
			e := models.AsError(err)
			fs, _ := e.Details["fields"].([]models.FieldIssue)
			if err == nil || e.Code != models.CodeValidation || len(fs) != 1 || fs[0].Field != tc.field {
				t.Fatalf("want VALIDATION_ERROR on %s, got %v %+v", tc.field, err, fs)
			}
		})
	}
}

// TestTrackerTokenSealed: the token is stored sealed (bound to its row),
// opens to itself, is in no JSON of the integration, and a patch reseals
// a new one; the mapping's blanks take the defaults.
func TestTrackerTokenSealed(t *testing.T) {
	f := newTrackerFixture(t)
	var raw struct{ Sealed string }
	if err := f.core.In(f.ctx, models.SystemScope()).Model(&support.TrackerIntegration{}).Select("api_token_sealed AS sealed").
		Where("id = ?", f.c.ID).Scan(&raw).Error; err != nil {
		t.Fatal(err)
	}
	if raw.Sealed == "" || strings.Contains(raw.Sealed, trackerToken) {
		t.Fatalf("stored token %q", raw.Sealed)
	}
	got, err := f.s.GetTrackerIntegration(f.ctx, f.customer, f.c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if tok, err := f.s.TrackerToken(got); err != nil || tok != trackerToken {
		t.Fatalf("opened %q, %v", tok, err)
	}
	if b, _ := json.Marshal(got); strings.Contains(string(b), trackerToken) || strings.Contains(string(b), raw.Sealed) {
		t.Fatalf("the token is in the JSON: %s", b)
	}
	if got.APITokenLast4 != "XYZ9" || got.Username != "bot" || got.TrackerURL != "https://tracker.example.com" ||
		got.PriorityMapping != (support.PriorityMapping{Critical: "P1", High: "High", Medium: "Medium", Low: "Low"}) {
		t.Fatalf("stored %+v", got)
	}
	// Copied into another row, the sealed value does not open.
	other := *got
	other.ID = "trk_other"
	if _, err := f.s.TrackerToken(&other); err == nil {
		t.Fatal("a sealed token opened for another row")
	}
	next := "new-token-ABCD"
	up, err := f.s.UpdateTrackerIntegration(f.ctx, f.customer, f.c.ID, support.TrackerPatch{APIToken: &next})
	if err != nil {
		t.Fatal(err)
	}
	if tok, _ := f.s.TrackerToken(up); tok != next || up.APITokenLast4 != "ABCD" {
		t.Fatalf("after the patch: %q %q", tok, up.APITokenLast4)
	}
	// Another organization sees nothing.
	stranger := &models.Principal{ID: "ak_x", OrganizationID: "org_stranger", Environment: models.EnvLive, Role: models.RoleCustomer, Permissions: []string{"*"}}
	if _, err := f.s.GetTrackerIntegration(f.ctx, stranger, f.c.ID); models.ErrorCode(err) != models.CodeNotFound {
		t.Fatalf("a stranger reads it: %v", err)
	}
}

// TestTrackerLinkIdempotent: a ticket's link is recorded once (the first
// wins), sets vendor_ticket once, and the plan stops offering the ticket.
func TestTrackerLinkIdempotent(t *testing.T) {
	f := newTrackerFixture(t)
	scope := f.c.Scope()
	tk := f.ticket(t, support.PriorityCritical)
	plan, err := f.s.PlanTrackerSync(f.ctx, scope, f.c.ID, 10)
	if err != nil || len(plan.TicketIDs) != 1 || plan.TicketIDs[0] != tk.ID || plan.Stop {
		t.Fatalf("plan %+v, %v", plan, err)
	}
	first, err := f.s.RecordTrackerLink(f.ctx, scope, support.TrackerLink{IntegrationID: f.c.ID, TicketID: tk.ID, IssueKey: "OPS-1", IssueID: "10001", Priority: "P1"})
	if err != nil {
		t.Fatal(err)
	}
	second, err := f.s.RecordTrackerLink(f.ctx, scope, support.TrackerLink{IntegrationID: f.c.ID, TicketID: tk.ID, IssueKey: "OPS-2", IssueID: "10002"})
	if err != nil {
		t.Fatal(err)
	}
	if first.ID != second.ID || second.IssueKey != "OPS-1" {
		t.Fatalf("first %+v, second %+v", first, second)
	}
	var n int64
	f.core.In(f.ctx, scope).Model(&support.TrackerLink{}).Where("ticket_id = ?", tk.ID).Count(&n)
	if n != 1 {
		t.Fatalf("%d links", n)
	}
	got, err := f.s.GetTicket(f.ctx, f.customer, tk.ID)
	if err != nil || got.VendorTicket != "OPS-1" {
		t.Fatalf("vendor_ticket %q, %v", got.VendorTicket, err)
	}
	plan, _ = f.s.PlanTrackerSync(f.ctx, scope, f.c.ID, 10)
	if len(plan.TicketIDs) != 0 || len(plan.LinkIDs) != 1 {
		t.Fatalf("plan after the link %+v", plan)
	}
}

// TestTrackerCommentsOnce: the plan offers customer-visible comments of
// linked tickets only (never internal ones), not once marked as posted;
// an imported comment is added once and never offered back.
func TestTrackerCommentsOnce(t *testing.T) {
	f := newTrackerFixture(t)
	scope := f.c.Scope()
	tk := f.ticket(t, support.PriorityHigh)
	link, err := f.s.RecordTrackerLink(f.ctx, scope, support.TrackerLink{IntegrationID: f.c.ID, TicketID: tk.ID, IssueKey: "OPS-7"})
	if err != nil {
		t.Fatal(err)
	}
	pub, err := f.s.AddComment(f.ctx, f.customer, tk.ID, support.CommentInput{Content: "still down"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.AddComment(f.ctx, f.staff, tk.ID, support.CommentInput{Content: "line card?", Type: support.CommentInternalNote, Visibility: support.VisibilityInternal}); err != nil {
		t.Fatal(err)
	}
	plan, _ := f.s.PlanTrackerSync(f.ctx, scope, f.c.ID, 10)
	if len(plan.CommentIDs) != 1 || plan.CommentIDs[0] != pub.Comment.ID {
		t.Fatalf("comments offered %v", plan.CommentIDs)
	}
	for range 2 {
		if err := f.s.MarkTrackerComment(f.ctx, scope, f.c.ID, tk.ID, pub.Comment.ID, "500"); err != nil {
			t.Fatal(err)
		}
	}
	rc := support.RemoteComment{ID: "501", Author: "Ops", Body: "replaced the card"}
	for i, want := range []bool{true, false} {
		added, err := f.s.ImportTrackerComment(f.ctx, scope, link, rc)
		if err != nil || added != want {
			t.Fatalf("import %d: %v %v", i, added, err)
		}
	}
	if added, _ := f.s.ImportTrackerComment(f.ctx, scope, link, support.RemoteComment{ID: "502", Body: "echo " + support.TrackerCommentRef("cmt_x")}); added {
		t.Fatal("an echo of ours was imported")
	}
	plan, _ = f.s.PlanTrackerSync(f.ctx, scope, f.c.ID, 10)
	if len(plan.CommentIDs) != 0 {
		t.Fatalf("comments offered after sync %v", plan.CommentIDs)
	}
	cs, _, err := f.s.ListComments(f.ctx, f.customer, tk.ID, models.PageRequest{Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	imported := 0
	for _, c := range cs {
		if c.Content == "replaced the card" {
			imported++
			if c.Visibility != support.VisibilityCustomer || c.AuthorType != "agent" || c.AuthorID != f.c.ID {
				t.Fatalf("imported comment %+v", c)
			}
		}
	}
	if imported != 1 {
		t.Fatalf("imported %d times", imported)
	}
	// Paused: the plan says stop.
	off := false
	if _, err := f.s.UpdateTrackerIntegration(f.ctx, f.customer, f.c.ID, support.TrackerPatch{Active: &off}); err != nil {
		t.Fatal(err)
	}
	if plan, _ := f.s.PlanTrackerSync(f.ctx, scope, f.c.ID, 10); !plan.Stop {
		t.Fatalf("plan of a paused integration %+v", plan)
	}
}

// TestTrackerIntegrationLimit: an organization holds at most
// MaxTrackersPerTenant tracker integrations per environment; the next is
// RESOURCE_LIMIT_EXCEEDED and nothing is stored, and another environment
// has its own allowance.
func TestTrackerIntegrationLimit(t *testing.T) {
	f := newTrackerFixture(t) // holds one already
	spec := support.TrackerSpec{TrackerURL: "https://t.example.com", Username: "bot", APIToken: "tok", ProjectKey: "OPS", Active: true}
	for i := 1; i < support.MaxTrackersPerTenant; i++ {
		if _, err := f.s.CreateTrackerIntegration(f.ctx, f.customer, spec); err != nil {
			t.Fatal(err)
		}
	}
	_, err := f.s.CreateTrackerIntegration(f.ctx, f.customer, spec)
	if e := models.AsError(err); e.Code != models.CodeResourceLimit || e.Details["limit"] != support.MaxTrackersPerTenant {
		t.Fatalf("one over the limit: %v %+v", err, e.Details)
	}
	var n int64
	f.core.In(f.ctx, f.customer.OwnScope()).Model(&support.TrackerIntegration{}).Count(&n)
	if n != support.MaxTrackersPerTenant {
		t.Fatalf("%d integrations stored, want %d", n, support.MaxTrackersPerTenant)
	}
	sandbox := *f.customer
	sandbox.Environment = models.EnvTest
	if _, err := f.s.CreateTrackerIntegration(f.ctx, &sandbox, spec); err != nil {
		t.Fatalf("the sandbox's first integration: %v", err)
	}
}
