package migrate

import "gorm.io/gorm"

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

// dropColumns drops the columns of model's fields that the table has.
func dropColumns(tx *gorm.DB, model any, fields ...string) error {
	m := tx.Migrator()
	for _, f := range fields {
		if !m.HasColumn(model, f) {
			continue
		}
		if err := m.DropColumn(model, f); err != nil {
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
