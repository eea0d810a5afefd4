package support_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/identity"
	"github.com/telcoplatform/platform/models/support"
	"github.com/telcoplatform/platform/testenv"
)

// TestCloseIfQuiet: a resolved ticket closes (actor system auto_close,
// ticket.updated) only while it is still the same resolution and nothing
// changed since; closing again does nothing.
func TestCloseIfQuiet(t *testing.T) {
	ctx := context.Background()
	core, seeded := testenv.SeededStore(t)
	clock := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
	core.Now = func() time.Time { return clock }
	s := support.NewStore(core)
	prov, err := identity.NewStore(core).EnsureProviderOrganization(ctx)
	if err != nil {
		t.Fatal(err)
	}
	staff := &models.Principal{ID: "ak_staff", OrganizationID: prov.ID, Environment: models.EnvLive, Role: models.RoleAgent, Permissions: []string{"*"}}
	customer := &models.Principal{ID: "ak_cust", OrganizationID: seeded.Demo.ID, Environment: models.EnvLive, Role: models.RoleCustomer, Permissions: []string{"*"}}
	open := func() *support.Ticket {
		tk, err := s.CreateTicket(ctx, customer, support.TicketInput{Title: "t", Description: "d", Category: "general"})
		if err != nil {
			t.Fatal(err)
		}
		return tk
	}
	resolve := func(id string) support.AutoClose {
		clock = clock.Add(time.Minute)
		st := support.StatusResolved
		res, err := s.UpdateTicket(ctx, staff, id, support.UpdateInput{Status: &st})
		if err != nil {
			t.Fatal(err)
		}
		in, ok := support.AutoCloseOf(res.Ticket)
		if !ok {
			t.Fatalf("no auto close of %+v", res.Ticket)
		}
		return in
	}
	status := func(id string) string {
		tk, err := s.GetTicket(ctx, customer, id)
		if err != nil {
			t.Fatal(err)
		}
		return tk.Status
	}

	quiet := open()
	in := resolve(quiet.ID)
	clock = clock.Add(support.AutoCloseAfter)
	if closed, err := s.CloseIfQuiet(ctx, in); err != nil || !closed || status(quiet.ID) != support.StatusClosed {
		t.Fatalf("quiet ticket: closed %v, %v, status %s", closed, err, status(quiet.ID))
	}
	if closed, err := s.CloseIfQuiet(ctx, in); err != nil || closed {
		t.Fatalf("closing again: %v, %v", closed, err)
	}
	hist, _, err := s.TicketHistory(ctx, customer, quiet.ID, models.PageRequest{Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	last := hist[len(hist)-1]
	if last.Field != "status" || last.NewValue != support.StatusClosed || last.ActorType != support.ActorSystem || last.ActorID != support.ActorAutoClose {
		t.Fatalf("last history entry %+v", last)
	}

	// A comment after the resolution: not quiet.
	commented := open()
	in = resolve(commented.ID)
	clock = clock.Add(time.Minute)
	if _, err := s.AddComment(ctx, staff, commented.ID, support.CommentInput{Content: "one more thing"}); err != nil {
		t.Fatal(err)
	}
	if closed, _ := s.CloseIfQuiet(ctx, in); closed || status(commented.ID) != support.StatusResolved {
		t.Fatalf("a commented ticket was closed")
	}

	// Reopened and resolved again: the first resolution's close does nothing, the second's closes.
	again := open()
	first := resolve(again.ID)
	clock = clock.Add(time.Minute)
	reopen := support.StatusOpen
	if _, err := s.UpdateTicket(ctx, customer, again.ID, support.UpdateInput{Status: &reopen}); err != nil {
		t.Fatal(err)
	}
	if closed, _ := s.CloseIfQuiet(ctx, first); closed {
		t.Fatal("a reopened ticket was closed")
	}
	second := resolve(again.ID)
	if closed, _ := s.CloseIfQuiet(ctx, first); closed {
		t.Fatal("an earlier resolution closed the ticket")
	}
	if closed, err := s.CloseIfQuiet(ctx, second); err != nil || !closed {
		t.Fatalf("second resolution: %v, %v", closed, err)
	}
	// Another tenant's scope never finds the ticket.
	other := second
	other.OrganizationID = prov.ID
	if closed, err := s.CloseIfQuiet(ctx, other); err != nil || closed {
		t.Fatalf("wrong tenant: %v, %v", closed, err)
	}
}

func TestSanitizeFilename(t *testing.T) {
	for in, want := range map[string]string{
		"report.pdf":                  "report.pdf",
		"../../etc/passwd":            "passwd",
		`C:\Users\jane\trace (1).txt`: "trace (1).txt",
		"\"quoted\";\r\nname.log":     "_quoted____name.log",
		"..hidden":                    "hidden",
		"résumé.pdf":                  "r_sum_.pdf",
		"...":                         "attachment",
		"":                            "attachment",
	} {
		if got := support.SanitizeFilename(in); got != want {
			t.Errorf("SanitizeFilename(%q) = %q, want %q", in, got, want)
		}
	}
	long := support.SanitizeFilename(strings.Repeat("a", 300) + ".txt")
	if len(long) != 255 || long[len(long)-4:] != ".txt" {
		t.Errorf("long name %d bytes: %q", len(long), long)
	}
}
