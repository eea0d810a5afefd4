package support

import (
	"context"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/identity"
)

// demoTickets are the demo tenant's sandbox tickets, so that a new user
// sees a support queue on the first run.
func demoTickets() []TicketInput {
	return []TicketInput{
		{Title: "Packet loss on the Austin fiber circuit", Description: "Since this morning we see 2-3% packet loss toward our data centre during business hours.",
			Category: "network", Subcategory: "performance", Priority: "high", Severity: "business_impacting",
			Contact: Contact{Name: "Demo User", Email: identity.DemoUserEmail}, Location: Location{Timezone: "America/Chicago"},
			Metadata: map[string]any{"affected_users": 40}},
		{Title: "Add two DIDs to the main voice system", Description: "Please add two direct-dial numbers for the new support line.",
			Category: "voice", Subcategory: "features", Priority: "low", Severity: "minimal",
			Contact: Contact{Name: "Demo User", Email: identity.DemoUserEmail}},
	}
}

// SeedDemoTickets opens the demo tickets in the demo organization's sandbox
// (test environment) unless they exist already, and returns how many
// sandbox tickets it holds. Running it again adds nothing.
// Errors: those of CreateTicket.
func (s *Store) SeedDemoTickets(ctx context.Context, demoOrgID string) (int, error) {
	p := &models.Principal{Kind: models.PrincipalAPIKey, ID: "seed", OrganizationID: demoOrgID, Environment: models.EnvTest,
		Role: models.RoleCustomer, Permissions: []string{"support:read", "support:create"}}
	db := s.core.In(ctx, p.OwnScope())
	for _, in := range demoTickets() {
		var n int64
		if err := db.Model(&Ticket{}).Where("title = ?", in.Title).Count(&n).Error; err != nil {
			return 0, dbErr(err)
		}
		if n > 0 {
			continue
		}
		if _, err := s.CreateTicket(ctx, p, in); err != nil {
			return 0, err
		}
	}
	var total int64
	if err := db.Model(&Ticket{}).Count(&total).Error; err != nil {
		return 0, dbErr(err)
	}
	return int(total), nil
}
