package migrate

import (
	"github.com/telcoplatform/platform/models"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// addColumns adds the columns of model's fields that the table does not have
// yet (a migration that adds columns can meet a table that already has some).
func addColumns(tx *gorm.DB, model any, fields ...string) error {
	m := tx.Migrator()
	for _, f := range fields {
		if m.HasColumn(model, f) {
			continue
		}
		if err := m.AddColumn(model, f); err != nil {
			return err
		}
	}
	return nil
}

// dropColumns drops the columns of model's fields that the table has, with
// ALTER TABLE ... DROP COLUMN on both databases. (GORM's SQLite migrator
// drops a column by rebuilding the table, which loses the table's other
// indexes; SQLite drops an unindexed column in place since 3.35.)
func dropColumns(tx *gorm.DB, model any, fields ...string) error {
	stmt := &gorm.Statement{DB: tx}
	if err := stmt.Parse(model); err != nil {
		return err
	}
	for _, name := range fields {
		f := stmt.Schema.LookUpField(name)
		if f == nil {
			return models.Errorf(models.CodeInternal, "migration: %s has no field %s", stmt.Schema.Name, name)
		}
		if !tx.Migrator().HasColumn(model, f.DBName) {
			continue
		}
		if err := tx.Exec("ALTER TABLE ? DROP COLUMN ?", clause.Table{Name: stmt.Schema.Table}, clause.Column{Name: f.DBName}).Error; err != nil {
			return err
		}
	}
	return nil
}

// dropTables drops tables, listed parents first, children first.
func dropTables(tx *gorm.DB, tables []any) error {
	for i := len(tables) - 1; i >= 0; i-- {
		if err := tx.Migrator().DropTable(tables[i]); err != nil {
			return err
		}
	}
	return nil
}
