package quotes

import (
	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/catalog"
	"github.com/telcoplatform/platform/models/services"
)

// Store is the quotes domain's store: the core store (database, clock, sealer,
// tenancy scopes) with quotes: priced offers of several items, valid 30 days, ordered item by item as methods.
type Store struct {
	*models.Store
	services *services.Store
	catalog  *catalog.Store
}

// NewStore returns the quotes store on core.
func NewStore(core *models.Store) *Store {
	return &Store{Store: core, services: services.NewStore(core), catalog: catalog.NewStore(core)}
}
