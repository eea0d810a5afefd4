package seed

import (
	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/billing"
	"github.com/telcoplatform/platform/models/identity"
	"github.com/telcoplatform/platform/models/services"
	"github.com/telcoplatform/platform/models/telemetry"
)

// Store is the seed domain's store: the core store (database, clock, sealer,
// tenancy scopes) with the seeding of the catalog, the provisioning data, the platform's organizations and the demo sandbox as methods.
type Store struct {
	*models.Store
	telemetry *telemetry.Store
	identity  *identity.Store
	services  *services.Store
	billing   *billing.Store
}

// NewStore returns the seed store on core.
func NewStore(core *models.Store) *Store {
	return &Store{Store: core, telemetry: telemetry.NewStore(core), identity: identity.NewStore(core), services: services.NewStore(core), billing: billing.NewStore(core)}
}
