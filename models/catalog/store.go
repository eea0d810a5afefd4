package catalog

import (
	"time"

	"github.com/telcoplatform/platform/models"
)

// Store is the catalog domain's store: the core store (database, clock, sealer,
// tenancy scopes) with the catalog, provisioning templates, serviceable locations and inventory as methods.
type Store struct {
	*models.Store
	ref *referenceCache // the reference data, kept for ReferenceTTL
}

// NewStore returns the catalog store on core.
func NewStore(core *models.Store) *Store {
	return &Store{Store: core, ref: &referenceCache{ttl: ReferenceTTL, now: time.Now}}
}
