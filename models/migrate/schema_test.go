package migrate_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/testenv"
	"gorm.io/gorm"
)

// openDB opens an empty database private to t (SQLite, or PostgreSQL when
// TEST_DATABASE_URL is set), closed when t finishes.
func openDB(t *testing.T) *gorm.DB {
	t.Helper()
	db, err := models.Open(context.Background(), testenv.DatabaseURL(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = models.Close(db) })
	return db
}

// schemaOf describes db's schema as GORM's Migrator reads it, on SQLite and
// PostgreSQL alike: one line per table, per column (type, nullability,
// primary key, default) and per index (uniqueness, columns in order, and the
// definition the database keeps, which holds a partial index's condition),
// sorted. SQLite's own tables are left out.
func schemaOf(t *testing.T, db *gorm.DB) []string {
	t.Helper()
	m := db.Migrator()
	tables, err := m.GetTables()
	if err != nil {
		t.Fatal(err)
	}
	definitions := indexDefinitions(t, db)
	virtual, triggers := sqliteObjects(t, db)
	var lines []string
	for name, def := range triggers {
		lines = append(lines, "trigger "+name+" definition="+def)
	}
	for _, table := range tables {
		if strings.HasPrefix(table, "sqlite_") {
			continue
		}
		lines = append(lines, "table "+table)
		if def, ok := virtual[table]; ok { // an FTS5 table: GORM cannot read its columns
			lines = append(lines, "virtual "+table+" definition="+def)
			continue
		}
		columns, err := m.ColumnTypes(table)
		if err != nil {
			t.Fatalf("columns of %s: %v", table, err)
		}
		for _, c := range columns {
			full, _ := c.ColumnType()
			nullable, _ := c.Nullable()
			pk, _ := c.PrimaryKey()
			def, hasDefault := c.DefaultValue()
			if !hasDefault {
				def = "(none)"
			}
			lines = append(lines, fmt.Sprintf("column %s.%s type=%s null=%v pk=%v default=%s",
				table, c.Name(), strings.ToLower(full), nullable, pk, def))
		}
		indexes, err := m.GetIndexes(table)
		if err != nil {
			t.Fatalf("indexes of %s: %v", table, err)
		}
		for _, ix := range indexes {
			unique, _ := ix.Unique()
			lines = append(lines, fmt.Sprintf("index %s.%s unique=%v columns=%s definition=%s",
				table, ix.Name(), unique, strings.Join(ix.Columns(), ","), definitions[ix.Name()]))
		}
	}
	slices.Sort(lines)
	return lines
}

// indexDefinitions returns the statement that defines each index, by index
// name, as the database keeps it (empty for SQLite's automatic indexes).
func indexDefinitions(t *testing.T, db *gorm.DB) map[string]string {
	t.Helper()
	var rows []struct{ Name, Definition string }
	query := "SELECT indexname AS name, indexdef AS definition FROM pg_indexes WHERE schemaname = current_schema()"
	if models.IsSQLite(db) {
		query = "SELECT name, COALESCE(sql, '') AS definition FROM sqlite_master WHERE type = 'index'"
	}
	if err := db.Raw(query).Scan(&rows).Error; err != nil {
		t.Fatal(err)
	}
	defs := make(map[string]string, len(rows))
	for _, r := range rows {
		defs[r.Name] = r.Definition
	}
	return defs
}

// sqliteObjects returns the definitions of SQLite's virtual tables and of
// its triggers, by name (none on PostgreSQL).
func sqliteObjects(t *testing.T, db *gorm.DB) (virtual, triggers map[string]string) {
	t.Helper()
	virtual, triggers = map[string]string{}, map[string]string{}
	if !models.IsSQLite(db) {
		return virtual, triggers
	}
	var rows []struct{ Type, Name, Definition string }
	if err := db.Raw("SELECT type, name, COALESCE(sql, '') AS definition FROM sqlite_master WHERE type IN ('table', 'trigger')").Scan(&rows).Error; err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		switch {
		case r.Type == "trigger":
			triggers[r.Name] = strings.Join(strings.Fields(r.Definition), " ")
		case strings.HasPrefix(strings.ToUpper(r.Definition), "CREATE VIRTUAL TABLE"):
			virtual[r.Name] = r.Definition
		}
	}
	return virtual, triggers
}

// schemaDiff returns the lines of want missing from got and the lines of
// got that want does not have.
func schemaDiff(want, got []string) (missing, extra []string) {
	for _, l := range want {
		if _, found := slices.BinarySearch(got, l); !found {
			missing = append(missing, l)
		}
	}
	for _, l := range got {
		if _, found := slices.BinarySearch(want, l); !found {
			extra = append(extra, l)
		}
	}
	return missing, extra
}

// requireSameSchema fails t when got differs from want, listing the
// differences.
func requireSameSchema(t *testing.T, want, got []string) {
	t.Helper()
	missing, extra := schemaDiff(want, got)
	if len(missing)+len(extra) == 0 {
		return
	}
	t.Fatalf("schemas differ\nmissing:%s\nextra:%s", listed(missing), listed(extra))
}

// listed returns lines as an indented list, one per line.
func listed(lines []string) string {
	if len(lines) == 0 {
		return " none"
	}
	return "\n  " + strings.Join(lines, "\n  ")
}
