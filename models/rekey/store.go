package rekey

import "github.com/telcoplatform/platform/models"

// Store is the rekey domain's store: the core store (database, clock, sealer,
// tenancy scopes) with the re-sealing of every sealed secret under the current key as methods.
type Store struct {
	*models.Store
}

// NewStore returns the rekey store on core.
func NewStore(core *models.Store) *Store { return &Store{Store: core} }
