package operations

import "github.com/telcoplatform/platform/models"

// Store is the operations domain's store: the core store (database, clock, sealer,
// tenancy scopes) with long-running operations, their steps and their outcomes as methods.
type Store struct {
	*models.Store
	rows *models.RowReader[Operation] // snapshots of one operation's row (OperationSnapshot)
}

// NewStore returns the operations store on core.
func NewStore(core *models.Store) *Store {
	return &Store{Store: core, rows: models.NewRowReader[Operation](core)}
}
