package services

import (
	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/catalog"
	"github.com/telcoplatform/platform/models/operations"
)

// Store is the services domain's store: the core store (database, clock, sealer,
// tenancy scopes) with orders of the nine kinds, services, their changes and their pricing as methods.
type Store struct {
	*models.Store
	operations *operations.Store
	catalog    *catalog.Store
	rows       *models.RowReader[Service] // snapshots of one service's row (ServiceSnapshot)
}

// NewStore returns the services store on core.
func NewStore(core *models.Store) *Store {
	return &Store{Store: core, operations: operations.NewStore(core), catalog: catalog.NewStore(core),
		rows: models.NewRowReader[Service](core)}
}
