package support_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"gorm.io/gorm"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/support"
	"github.com/telcoplatform/platform/testenv"
)

func TestTransitionTable(t *testing.T) {
	allowed := map[string][]string{
		"open":        {"in_progress", "pending", "escalated", "resolved", "closed"},
		"in_progress": {"pending", "escalated", "resolved", "closed"},
		"pending":     {"open", "in_progress", "escalated", "resolved", "closed"},
		"escalated":   {"in_progress", "pending", "resolved", "closed"},
		"resolved":    {"open", "in_progress", "closed"},
		"closed":      {},
	}
	for _, from := range support.Statuses() {
		for _, to := range support.Statuses() {
			want := slices.Contains(allowed[from], to)
			if got := support.CanTransition(from, to); got != want {
				t.Errorf("%s -> %s: %v, want %v", from, to, got, want)
			}
		}
	}
	if support.CanTransition("open", "open") || support.CanTransition("bogus", "open") {
		t.Fatal("a non-move or an unknown status is allowed")
	}
}

func TestTicketValidationRules(t *testing.T) {
	store, _ := testenv.SeededStore(t)
	cats, err := support.NewStore(store).ListCategories(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	base := func() support.TicketInput {
		return support.TicketInput{Title: "t", Description: "d", Category: "voice", Subcategory: "call_quality", Priority: "high", Severity: "outage",
			Contact:  support.Contact{Email: "a@example.com", Phone: "+44 (20) 7946-0000"},
			Location: support.Location{Timezone: "Europe/London"}, Metadata: map[string]any{"affected_users": 3}}
	}
	many := map[string]any{}
	for i := 0; i < 51; i++ {
		many[strings.Repeat("k", i+1)] = i
	}
	tests := []struct {
		name   string
		change func(*support.TicketInput)
		field  string // "" = valid
	}{
		{"valid", func(*support.TicketInput) {}, ""},
		{"subject alias", func(in *support.TicketInput) { in.Title, in.Subject = "", "s" }, ""},
		{"UTC", func(in *support.TicketInput) { in.Location.Timezone = "UTC" }, ""},
		{"no title", func(in *support.TicketInput) { in.Title = " " }, "title"},
		{"long title", func(in *support.TicketInput) { in.Title = strings.Repeat("é", 201) }, "title"},
		{"no description", func(in *support.TicketInput) { in.Description = "" }, "description"},
		{"long description", func(in *support.TicketInput) { in.Description = strings.Repeat("x", 10001) }, "description"},
		{"no category", func(in *support.TicketInput) { in.Category, in.Subcategory = "", "" }, "category"},
		{"unknown category", func(in *support.TicketInput) { in.Category = "weather" }, "category"},
		{"foreign subcategory", func(in *support.TicketInput) { in.Subcategory = "connectivity" }, "subcategory"},
		{"priority", func(in *support.TicketInput) { in.Priority = "P1" }, "priority"},
		{"severity", func(in *support.TicketInput) { in.Severity = "bad" }, "severity"},
		{"email with name", func(in *support.TicketInput) { in.Contact.Email = "Jane <a@example.com>" }, "contact.email"},
		{"email", func(in *support.TicketInput) { in.Contact.Email = "a@" }, "contact.email"},
		{"phone letters", func(in *support.TicketInput) { in.Contact.Phone = "+1 555 CALL NOW" }, "contact.phone"},
		{"phone too long", func(in *support.TicketInput) { in.Contact.Phone = "+1234567890123456" }, "contact.phone"},
		{"timezone", func(in *support.TicketInput) { in.Location.Timezone = "Europe/Atlantis" }, "location.timezone"},
		{"metadata keys", func(in *support.TicketInput) { in.Metadata = many }, "metadata"},
		{"metadata size", func(in *support.TicketInput) { in.Metadata = map[string]any{"x": strings.Repeat("y", 8200)} }, "metadata"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := base()
			tc.change(&in)
			err := in.Validate(cats).Err()
			if tc.field == "" {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			e := models.AsError(err)
			if e.Code != models.CodeValidation {
				t.Fatalf("error %v", err)
			}
			fields := e.Details["fields"].([]models.FieldIssue)
			if len(fields) != 1 || fields[0].Field != tc.field {
				t.Fatalf("issues %v, want one for %s", fields, tc.field)
			}
		})
	}
}

func TestSeedIsIdempotentAndNumbersAreUnique(t *testing.T) {
	store, seeded := testenv.SeededStore(t)
	ctx := context.Background()
	s := support.NewStore(store)
	if err := s.Seed(ctx); err != nil {
		t.Fatal(err)
	}
	cats, err := s.ListCategories(ctx)
	if err != nil || len(cats) != 7 {
		t.Fatalf("%d categories, %v", len(cats), err)
	}
	for _, c := range cats {
		if len(c.Targets) != 4 || len(c.Subcategories) < 2 {
			t.Fatalf("category %s: %d targets, %d subcategories", c.ID, len(c.Targets), len(c.Subcategories))
		}
	}
	crit, _ := cats[0].Target("critical")
	if crit.ResponseTime() != "15m" || crit.ResolutionTime() != "4h" {
		t.Fatalf("critical targets %+v", crit)
	}
	p := &models.Principal{OrganizationID: seeded.Demo.ID, Environment: models.EnvLive, Role: models.RoleCustomer, Permissions: []string{"*"}}
	const n = 8
	numbers := make(chan string, n)
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		go func() {
			tk, err := s.CreateTicket(ctx, p, support.TicketInput{Title: "t", Description: "d", Category: "general"})
			if err != nil {
				errs <- err
				return
			}
			numbers <- tk.Number
		}()
	}
	seen := map[string]bool{}
	for i := 0; i < n; i++ {
		select {
		case err := <-errs:
			t.Fatal(err)
		case num := <-numbers:
			if seen[num] {
				t.Fatalf("number %s given twice", num)
			}
			seen[num] = true
		}
	}
}

// TestTablesMatchTheMigration checks that every column of the domain types
// exists in the tables migrations 202611260070, 202611260080, 202611260090,
// 202611260100 and 202611260110 created.
func TestTablesMatchTheMigration(t *testing.T) {
	store := testenv.Store(t)
	m := store.DB.Migrator()
	for _, model := range []any{&support.Category{}, &support.Subcategory{}, &support.SLATarget{}, &support.Ticket{}, &support.HistoryEntry{}, &support.Comment{}, &support.RoutingRule{}, &support.Article{}, &support.Feedback{},
		&support.TicketNotification{}, &support.Attachment{}, &support.Team{}, &support.TeamMember{}} {
		stmt := &gorm.Statement{DB: store.DB}
		if err := stmt.Parse(model); err != nil {
			t.Fatal(err)
		}
		for _, f := range stmt.Schema.Fields {
			if f.DBName != "" && !m.HasColumn(model, f.DBName) {
				t.Errorf("%s has no column %s", stmt.Schema.Table, f.DBName)
			}
		}
	}
}

// TestSeedDemoTickets: the demo tenant's sandbox gets its tickets once;
// seeding again adds nothing, and the live environment stays empty.
func TestSeedDemoTickets(t *testing.T) {
	ctx := context.Background()
	core, seeded := testenv.SeededStore(t)
	s := support.NewStore(core)
	for range 2 {
		n, err := s.SeedDemoTickets(ctx, seeded.Demo.ID)
		if err != nil || n != 2 {
			t.Fatalf("demo tickets: %d, %v", n, err)
		}
	}
	live := &models.Principal{OrganizationID: seeded.Demo.ID, Environment: models.EnvLive, Role: models.RoleCustomer, Permissions: []string{"*"}}
	if _, total, err := s.ListTickets(ctx, live, support.TicketFilter{}, models.PageRequest{Limit: 10}); err != nil || total != 0 {
		t.Fatalf("live tickets: %d, %v", total, err)
	}
}
