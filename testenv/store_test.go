package testenv

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/migrate"
)

// recordedMigrations returns the migration IDs recorded in store's database.
func recordedMigrations(t *testing.T, store *models.Store) []string {
	t.Helper()
	var ids []string
	if err := store.DB.Raw("SELECT id FROM migrations ORDER BY id").Scan(&ids).Error; err != nil {
		t.Fatalf("read recorded migrations: %v", err)
	}
	return ids
}

// assertMigrated fails t unless store's database has every migration
// recorded (and nothing else) and some of the tables they create.
func assertMigrated(t *testing.T, store *models.Store) {
	t.Helper()
	want := migrate.IDs()
	slices.Sort(want)
	if got := recordedMigrations(t, store); !slices.Equal(got, want) {
		t.Fatalf("recorded migrations = %v, want %v", got, want)
	}
	for _, table := range []string{"organizations", "api_keys", "support_tickets"} {
		if !store.DB.Migrator().HasTable(table) {
			t.Errorf("table %s missing", table)
		}
	}
}

func TestTemplateKey(t *testing.T) {
	key := templateKey()
	if !regexp.MustCompile(`^[0-9a-f]{12}$`).MatchString(key) {
		t.Fatalf("templateKey() = %q, want 12 hex digits", key)
	}
	if again := templateKey(); again != key {
		t.Fatalf("templateKey() = %q, then %q", key, again)
	}
}

func TestStore(t *testing.T) {
	t.Parallel()
	first, second := Store(t), Store(t)
	assertMigrated(t, first)
	assertMigrated(t, second)

	// Writes in one are not seen in the other.
	if err := first.DB.Exec("INSERT INTO migrations (id) VALUES ('testenv_probe')").Error; err != nil {
		t.Fatal(err)
	}
	if err := first.DB.Exec("CREATE TABLE testenv_probe (x integer)").Error; err != nil {
		t.Fatal(err)
	}
	if got := recordedMigrations(t, first); !slices.Contains(got, "testenv_probe") {
		t.Fatalf("first store does not see its own write: %v", got)
	}
	if got := recordedMigrations(t, second); slices.Contains(got, "testenv_probe") {
		t.Fatalf("second store sees the first one's row: %v", got)
	}
	if second.DB.Migrator().HasTable("testenv_probe") {
		t.Fatal("second store sees the first one's table")
	}
	// Nor in a store made afterwards from the same template.
	assertMigrated(t, Store(t))
}

// testTemplate returns a template key private to t, and removes that
// template when t finishes.
func testTemplate(t *testing.T) string {
	t.Helper()
	key := "t" + randomHex(t, 6)
	t.Cleanup(func() {
		if serverURL := os.Getenv(envDatabaseURL); serverURL != "" {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			for _, name := range []string{"tmpl_" + key, "tmpl_" + key + "_build"} {
				if err := execAdmin(ctx, serverURL, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
					t.Errorf("drop template: %v", err)
				}
			}
			return
		}
		path := sqliteTemplatePath(key)
		for _, p := range []string{path, path + "-wal", path + "-shm"} {
			if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
				t.Errorf("remove template: %v", err)
			}
		}
	})
	return key
}

// assertTemplateReady fails t unless the template for key exists, complete
// and unused: on PostgreSQL it allows no connections and its temporary build
// database is gone; the SQLite file has no -wal or -shm beside it.
func assertTemplateReady(t *testing.T, key string) {
	t.Helper()
	serverURL := os.Getenv(envDatabaseURL)
	if serverURL == "" {
		path := sqliteTemplatePath(key)
		if _, err := os.Stat(path); err != nil {
			t.Fatalf("SQLite template: %v", err)
		}
		for _, side := range []string{"-wal", "-shm"} {
			if _, err := os.Stat(path + side); err == nil {
				t.Errorf("%s beside the SQLite template", side)
			}
		}
		return
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, serverURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var allow bool
	if err := conn.QueryRow(ctx, "SELECT datallowconn FROM pg_database WHERE datname = $1", "tmpl_"+key).Scan(&allow); err != nil {
		t.Fatalf("template database tmpl_%s: %v", key, err)
	}
	if allow {
		t.Errorf("template database tmpl_%s allows connections", key)
	}
	var building bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", "tmpl_"+key+"_build").Scan(&building); err != nil {
		t.Fatal(err)
	}
	if building {
		t.Errorf("build database tmpl_%s_build left behind", key)
	}
}

// markTemplate creates the table testenv_marker in the template for key.
func markTemplate(t *testing.T, key string) {
	t.Helper()
	ctx := context.Background()
	serverURL := os.Getenv(envDatabaseURL)
	if serverURL == "" {
		db, err := models.Open(ctx, "sqlite:"+sqliteTemplatePath(key), nil)
		if err != nil {
			t.Fatal(err)
		}
		err = db.Exec("CREATE TABLE testenv_marker (x integer)").Error
		if closeErr := models.Close(db); err != nil || closeErr != nil {
			t.Fatalf("mark SQLite template: %v, %v", err, closeErr)
		}
		return
	}
	// Connect for a moment; the next copy then finds the session ending.
	ident := pgx.Identifier{"tmpl_" + key}.Sanitize()
	if err := execAdmin(ctx, serverURL, "ALTER DATABASE "+ident+" WITH ALLOW_CONNECTIONS true"); err != nil {
		t.Fatal(err)
	}
	tmplURL, err := withDatabase(serverURL, "tmpl_"+key)
	if err != nil {
		t.Fatal(err)
	}
	if err := execAdmin(ctx, tmplURL, "CREATE TABLE testenv_marker (x integer)"); err != nil {
		t.Fatal(err)
	}
	if err := execAdmin(ctx, serverURL, "ALTER DATABASE "+ident+" WITH ALLOW_CONNECTIONS false"); err != nil {
		t.Fatal(err)
	}
}

func TestStoreReusesTemplate(t *testing.T) {
	t.Parallel()
	key := testTemplate(t)
	first := storeFromTemplate(t, key) // builds the template
	assertMigrated(t, first)
	assertTemplateReady(t, key)

	// A later store is a copy of that template, not a newly migrated
	// database: it has what was added to the template since.
	markTemplate(t, key)
	second := storeFromTemplate(t, key)
	assertMigrated(t, second)
	if !second.DB.Migrator().HasTable("testenv_marker") {
		t.Fatal("second store was not copied from the template")
	}
	if first.DB.Migrator().HasTable("testenv_marker") {
		t.Fatal("first store sees a change made to the template after it was copied")
	}
	assertTemplateReady(t, key)
}

func TestStoreTemplateConcurrent(t *testing.T) {
	t.Parallel()
	// Several tests miss the template at once: they build it once (on
	// PostgreSQL, under the advisory lock; on SQLite, the last complete file
	// wins) and copy it concurrently.
	key := testTemplate(t)
	t.Run("group", func(t *testing.T) {
		for i := range 6 {
			t.Run(fmt.Sprint(i), func(t *testing.T) {
				t.Parallel()
				assertMigrated(t, storeFromTemplate(t, key))
			})
		}
	})
	assertTemplateReady(t, key)
}
