package catalog

import "github.com/telcoplatform/platform/models"

// Store is the catalog domain's store: the core store (database, clock, sealer,
// tenancy scopes) with the catalog, provisioning templates, serviceable locations and inventory as methods.
type Store struct {
	*models.Store
}

// NewStore returns the catalog store on core.
func NewStore(core *models.Store) *Store { return &Store{Store: core} }
