package services

import (
	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/catalog"
)

// Store is the services domain's store: the core store (database, clock, sealer,
// tenancy scopes) with orders of the nine kinds, services and their changes, quotes, telemetry and operations as methods.
type Store struct {
	*models.Store
	catalog *catalog.Store
}

// NewStore returns the services store on core.
func NewStore(core *models.Store) *Store { return &Store{Store: core, catalog: catalog.NewStore(core)} }
