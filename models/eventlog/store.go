package eventlog

import "github.com/telcoplatform/platform/models"

// Store is the eventlog domain's store: the core store (database, clock, sealer,
// tenancy scopes) with the event log every domain writes to, webhook subscriptions and deliveries, and the notification outbox as methods.
type Store struct {
	*models.Store
}

// NewStore returns the eventlog store on core.
func NewStore(core *models.Store) *Store { return &Store{Store: core} }
