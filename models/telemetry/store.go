package telemetry

import (
	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/catalog"
	"github.com/telcoplatform/platform/models/services"
)

// Store is the telemetry domain's store: the core store (database, clock,
// sealer, tenancy scopes) with telemetry samples, uptime, incidents and
// performance reports as methods.
type Store struct {
	*models.Store
	services *services.Store
	catalog  *catalog.Store
}

// NewStore returns the telemetry store on core.
func NewStore(core *models.Store) *Store {
	return &Store{Store: core, services: services.NewStore(core), catalog: catalog.NewStore(core)}
}
