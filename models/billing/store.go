package billing

import (
	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/identity"
	"github.com/telcoplatform/platform/models/services"
)

// Store is the billing domain's store: the core store (database, clock, sealer,
// tenancy scopes) with accounts, invoices, payments, payment methods, subscriptions, usage and budgets as methods.
type Store struct {
	*models.Store
	identity *identity.Store
	services *services.Store
}

// NewStore returns the billing store on core.
func NewStore(core *models.Store) *Store {
	return &Store{Store: core, identity: identity.NewStore(core), services: services.NewStore(core)}
}
