package automation

import (
	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/catalog"
	"github.com/telcoplatform/platform/models/operations"
	"github.com/telcoplatform/platform/models/services"
)

// Store is the automation domain's store: the core store (database, clock, sealer,
// tenancy scopes) with bulk operations and orchestrations as methods.
type Store struct {
	*models.Store
	operations *operations.Store
	catalog    *catalog.Store
	services   *services.Store
}

// NewStore returns the automation store on core.
func NewStore(core *models.Store) *Store {
	return &Store{Store: core, operations: operations.NewStore(core), catalog: catalog.NewStore(core), services: services.NewStore(core)}
}
