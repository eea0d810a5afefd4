package support_test

import (
	"context"
	"errors"
	"testing"

	"gorm.io/gorm"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/support"
	"github.com/telcoplatform/platform/testenv"
)

// TestCreateTicketOrganizationLookupFailure: when reading the caller's
// organization fails (the database is down, say), a new ticket is refused
// with that failure, not with a VALIDATION_ERROR blaming customer_id; a
// caller whose organization does not exist still gets the validation error.
func TestCreateTicketOrganizationLookupFailure(t *testing.T) {
	store, seeded := testenv.SeededStore(t)
	ctx := context.Background()
	s := support.NewStore(store)
	in := support.TicketInput{Title: "t", Description: "d", Category: "general"}

	missing := &models.Principal{OrganizationID: "org_missing", Environment: models.EnvLive, Role: models.RoleCustomer, Permissions: []string{"*"}}
	_, err := s.CreateTicket(ctx, missing, in)
	if e := models.AsError(err); err == nil || e.Code != models.CodeValidation {
		t.Fatalf("a caller without an organization: %v, want VALIDATION_ERROR", err)
	}

	down := errors.New("connection refused")
	if err := store.DB.Callback().Query().Before("gorm:query").Register("test:organizations-down", func(db *gorm.DB) {
		if db.Statement.Table == "organizations" {
			_ = db.AddError(down)
		}
	}); err != nil {
		t.Fatal(err)
	}
	p := &models.Principal{OrganizationID: seeded.Demo.ID, Environment: models.EnvLive, Role: models.RoleCustomer, Permissions: []string{"*"}}
	_, err = s.CreateTicket(ctx, p, in)
	if err == nil {
		t.Fatal("a ticket was created although its organization could not be read")
	}
	if e := models.AsError(err); e.Code == models.CodeValidation {
		t.Fatalf("the organization's lookup failed and the answer is %s: %v", e.Code, e)
	}
}
