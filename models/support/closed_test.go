package support_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/eventlog"
	"github.com/telcoplatform/platform/models/identity"
	"github.com/telcoplatform/platform/models/support"
	"github.com/telcoplatform/platform/testenv"
)

// TestClosedTicketTakesNoWork: closed is final. A closed ticket refuses a
// customer_update (as POST comments does), a priority, an assignment, an
// escalation and an estimate, from staff and customers alike, and keeps
// no trace of the refused change; staff's own notes are still accepted.
func TestClosedTicketTakesNoWork(t *testing.T) {
	ctx := context.Background()
	core, seeded := testenv.SeededStore(t)
	s := support.NewStore(core)
	prov, err := identity.NewStore(core).EnsureProviderOrganization(ctx)
	if err != nil {
		t.Fatal(err)
	}
	staff := &models.Principal{ID: "ak_staff", OrganizationID: prov.ID, Environment: models.EnvLive, Role: models.RoleAgent, Permissions: []string{"*"}}
	customer := &models.Principal{ID: "ak_cust", OrganizationID: seeded.Demo.ID, Environment: models.EnvLive, Role: models.RoleCustomer, Permissions: []string{"*"}}
	tk, err := s.CreateTicket(ctx, customer, support.TicketInput{Title: "t", Description: "d", Category: "general"})
	if err != nil {
		t.Fatal(err)
	}
	closed := support.StatusClosed
	if _, err := s.UpdateTicket(ctx, customer, tk.ID, support.UpdateInput{Status: &closed}); err != nil {
		t.Fatal(err)
	}
	text, high, level, eta := "hello on closed", support.PriorityHigh, 2, "2030-01-01T00:00:00Z"
	admin := &models.Principal{ID: "ak_admin", OrganizationID: prov.ID, Environment: models.EnvLive, Role: models.RoleAdmin, Permissions: []string{"*"}}
	u, err := identity.NewStore(core).CreateUser(ctx, admin, identity.UserInput{Email: "closed-agent@provider.example", Name: "Agent", Role: models.RoleAgent, OrganizationID: prov.ID})
	if err != nil {
		t.Fatal(err)
	}
	agent := u.ID
	for name, c := range map[string]struct {
		p  *models.Principal
		in support.UpdateInput
	}{
		"staff customer_update":    {staff, support.UpdateInput{CustomerUpdate: &text}},
		"customer customer_update": {customer, support.UpdateInput{CustomerUpdate: &text}},
		"priority":                 {customer, support.UpdateInput{Priority: &high}},
		"escalation level":         {staff, support.UpdateInput{EscalationLevel: &level}},
		"assignment":               {staff, support.UpdateInput{AssignedTo: &agent}},
		"estimate":                 {staff, support.UpdateInput{EstimatedResolution: &eta}},
	} {
		if _, err := s.UpdateTicket(ctx, c.p, tk.ID, c.in); models.ErrorCode(err) != models.CodeInvalidStateTransition {
			t.Fatalf("%s on a closed ticket: %v", name, err)
		}
	}
	got, err := s.GetTicket(ctx, customer, tk.ID)
	if err != nil || got.Status != support.StatusClosed || got.Priority == support.PriorityHigh || got.EscalationLevel != 0 {
		t.Fatalf("after the refusals: %+v %v", got, err)
	}
	comments, _, err := s.ListComments(ctx, staff, tk.ID, models.PageRequest{Limit: 50})
	if err != nil || len(comments) != 0 {
		t.Fatalf("a refused customer_update left %d comments (%v)", len(comments), err)
	}
	notes := "post-mortem: fibre cut"
	if _, err := s.UpdateTicket(ctx, staff, tk.ID, support.UpdateInput{InternalNotes: &notes}); err != nil {
		t.Fatalf("staff notes on a closed ticket: %v", err)
	}
}

// TestTicketUpdatedListsEachFieldOnce: an escalation changes its reason
// twice (the level's and the escalation's own); ticket.updated's changes
// lists each field once.
func TestTicketUpdatedListsEachFieldOnce(t *testing.T) {
	f := newSLAFixture(t)
	tk := f.open(support.PriorityHigh)
	if _, err := f.s.EscalateTicket(f.ctx, f.staff, tk.ID, support.EscalateInput{Level: 1, Reason: "Customer-wide outage"}); err != nil {
		t.Fatal(err)
	}
	evs, err := eventlog.NewStore(f.core).EventsFor(f.ctx, models.SystemScope(), tk.ID)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range evs {
		if e.Type != support.EventTicketUpdated {
			continue
		}
		n++
		raw, err := json.Marshal(e.Data["changes"])
		if err != nil {
			t.Fatal(err)
		}
		var changes []string
		if err := json.Unmarshal(raw, &changes); err != nil || len(changes) == 0 {
			t.Fatalf("ticket.updated changes %s: %v", raw, err)
		}
		seen := map[string]bool{}
		for _, c := range changes {
			if seen[c] {
				t.Fatalf("ticket.updated lists %s twice: %v", c, changes)
			}
			seen[c] = true
		}
	}
	if n == 0 {
		t.Fatal("no ticket.updated")
	}
}
