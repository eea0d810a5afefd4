package migrate

import (
	"context"

	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// RunTo applies the migrations up to and including id, as Run does.
func RunTo(ctx context.Context, db *gorm.DB, id string) error {
	return run(ctx, db, func(m *gormigrate.Gormigrate) error { return m.MigrateTo(id) })
}

// RollbackTo undoes the migrations after id, newest first.
func RollbackTo(ctx context.Context, db *gorm.DB, id string) error {
	return run(ctx, db, func(m *gormigrate.Gormigrate) error { return m.RollbackTo(id) })
}
