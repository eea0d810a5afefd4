package seed

import (
	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/billing"
)

// Store is the seed domain's store: the core store (database, clock, sealer,
// tenancy scopes) with the seeding of the catalog, the provisioning data, the platform's organizations and the demo sandbox as methods.
type Store struct {
	*models.Store
	billing *billing.Store
}

// NewStore returns the seed store on core.
func NewStore(core *models.Store) *Store { return &Store{Store: core, billing: billing.NewStore(core)} }
