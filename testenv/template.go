package testenv

// Migrated templates. Running every migration for every test dominated the
// database tests (on PostgreSQL most of all), so Store copies a database that
// was migrated once instead: a template database on the PostgreSQL server, or
// a template file in a folder under os.TempDir() for SQLite. Templates are
// named by templateKey, so the test processes of one `go test ./...` run (and
// later runs of the same migrations) share them without any state in this
// package: a template exists under its final name only once it is complete.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"gorm.io/gorm"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/migrate"
)

// templateLockID is the PostgreSQL advisory lock (taken on the server's
// maintenance database, the one TEST_DATABASE_URL names) under which one test
// process builds a missing template while the others wait for it.
const templateLockID = 7_202_611_221

// PostgreSQL error codes the template code handles.
const (
	pgUndefinedDatabase = "3D000" // CREATE DATABASE ... TEMPLATE: no such template
	pgObjectInUse       = "55006" // the database is being accessed by other users
)

// templateKey returns the part of the template names that identifies the
// schema they hold: the first 12 hex digits of a SHA-256 over the migration
// IDs (migrate.IDs), the non-test Go files of models/migrate and go.mod.
//
// The IDs alone would miss an edit to a migration that is not released yet
// (its ID stays the same) or a gorm upgrade that changes what AutoMigrate
// creates; the stale template would then be copied silently, because
// migrate.Run skips the IDs it finds recorded. When those files cannot be
// found (a test binary run outside the module), the IDs alone are hashed.
//
// Reading the files costs well under a millisecond, so the key is computed
// on every call instead of being cached in package state.
func templateKey() string {
	h := sha256.New()
	for _, id := range migrate.IDs() {
		fmt.Fprintf(h, "migration %s\n", id)
	}
	if root, err := repoRoot(); err == nil {
		files, _ := filepath.Glob(filepath.Join(root, "models", "migrate", "*.go"))
		files = append(files, filepath.Join(root, "go.mod"))
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			b, err := os.ReadFile(f)
			if err != nil {
				continue
			}
			fmt.Fprintf(h, "file %s %d\n", filepath.Base(f), len(b))
			h.Write(b)
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}

// migratedDatabaseURL returns the DATABASE_URL of a database private to t
// that is a copy of the migrated template named by key (built first if it
// does not exist yet), removed when t finishes like DatabaseURL's.
func migratedDatabaseURL(t testing.TB, key string) string {
	t.Helper()
	if serverURL := os.Getenv(envDatabaseURL); serverURL != "" {
		return postgresDatabase(t, serverURL, "tmpl_"+key)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	template := sqliteTemplatePath(key)
	if err := ensureSQLiteTemplate(ctx, template); err != nil {
		t.Fatalf("testenv: build SQLite template %s: %v", template, err)
	}
	path := filepath.Join(t.TempDir(), "test.db")
	if err := copyFile(template, path); err != nil {
		t.Fatalf("testenv: copy SQLite template: %v", err)
	}
	return "sqlite:" + path
}

// migrateDatabase runs every migration on the database at dbURL, then after
// (if not nil), and closes the database.
func migrateDatabase(ctx context.Context, dbURL string, after func(*gorm.DB) error) error {
	db, err := models.Open(ctx, dbURL, nil)
	if err != nil {
		return err
	}
	err = migrate.Run(ctx, db)
	if err == nil && after != nil {
		err = after(db.WithContext(ctx))
	}
	return errors.Join(err, models.Close(db))
}

// SQLite.

// sqliteTemplatePath returns where the SQLite template for key lives: a
// folder under os.TempDir() shared by the test processes of the current user.
func sqliteTemplatePath(key string) string {
	dir := "telcoplatform-testdb-" + strconv.Itoa(os.Getuid())
	return filepath.Join(os.TempDir(), dir, "tmpl_"+key+".db")
}

// ensureSQLiteTemplate builds the template file at path unless it exists.
//
// The database is migrated in a private folder and written out with VACUUM
// INTO, which produces one self-contained file (no -wal or -shm beside it),
// which is then renamed to path: readers find either no file or a complete
// one. Processes that miss the file at the same time each build one, and the
// last rename wins; that costs one extra migration now and then, and needs
// no lock.
func ensureSQLiteTemplate(ctx context.Context, path string) error {
	if _, err := os.Stat(path); err == nil {
		return nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	work, err := os.MkdirTemp(dir, "build-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)

	out := filepath.Join(work, "template.db")
	err = migrateDatabase(ctx, "sqlite:"+filepath.Join(work, "build.db"), func(db *gorm.DB) error {
		return db.Exec("VACUUM INTO ?", out).Error
	})
	if err != nil {
		return err
	}
	for _, side := range []string{"-wal", "-shm", "-journal"} {
		if _, err := os.Stat(out + side); err == nil {
			return fmt.Errorf("VACUUM INTO left %s beside the template", filepath.Base(out+side))
		}
	}
	if err := os.Rename(out, path); err != nil {
		if _, statErr := os.Stat(path); statErr == nil {
			return nil // another process put its template in place first
		}
		return err
	}
	return nil
}

// copyFile copies the file at src to a new file dst.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		_ = out.Close()
		return err
	}
	return out.Close()
}

// PostgreSQL.

// postgresDatabase creates a uniquely named database (test_<random hex>) on
// the server at serverURL, drops it (WITH (FORCE)) when t finishes, and
// returns the server URL with its path replaced by the new database. The
// database is empty when template is "", otherwise a copy of the migrated
// template of that name, which is built first if it does not exist.
func postgresDatabase(t testing.TB, serverURL, template string) string {
	t.Helper()
	name := "test_" + randomHex(t, 8)
	ident := pgx.Identifier{name}.Sanitize()

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := createPostgresDatabase(ctx, serverURL, name, template); err != nil {
		t.Fatalf("testenv: create database %s: %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := execAdmin(ctx, serverURL, "DROP DATABASE IF EXISTS "+ident+" WITH (FORCE)"); err != nil {
			t.Errorf("testenv: drop database %s: %v", name, err)
		}
	})

	dbURL, err := withDatabase(serverURL, name)
	if err != nil {
		t.Fatalf("testenv: parse %s: %v", envDatabaseURL, err)
	}
	return dbURL
}

// createPostgresDatabase creates the database name, a copy of template
// unless that is "". A missing template is built (once: the first CREATE
// tells that it is missing). CREATE DATABASE ... TEMPLATE refuses to copy a
// database that has sessions; templates allow no connections, so that only
// happens for a moment after a template was built or changed, and the
// statement is retried for a few seconds then.
func createPostgresDatabase(ctx context.Context, serverURL, name, template string) error {
	sql := "CREATE DATABASE " + pgx.Identifier{name}.Sanitize()
	if template == "" {
		return execAdmin(ctx, serverURL, sql)
	}
	conn, err := pgx.Connect(ctx, serverURL)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	sql += " TEMPLATE " + pgx.Identifier{template}.Sanitize()
	if major, _, _ := strings.Cut(conn.PgConn().ParameterStatus("server_version"), "."); atoi(major) >= 15 {
		// PostgreSQL 15 copies block by block through the WAL by default,
		// which takes several times as long for a small database as copying
		// its files (and the checkpoint that needs costs little on a test
		// server).
		sql += " STRATEGY FILE_COPY"
	}
	built := false
	busyUntil := time.Now().Add(10 * time.Second)
	for {
		_, err := conn.Exec(ctx, sql)
		switch {
		case err == nil:
			return nil
		case pgCode(err) == pgUndefinedDatabase && !built:
			if err := ensurePostgresTemplate(ctx, serverURL, template); err != nil {
				return fmt.Errorf("build template %s: %w", template, err)
			}
			built = true
		case pgCode(err) == pgObjectInUse && time.Now().Before(busyUntil):
			if err := sleep(ctx, 50*time.Millisecond); err != nil {
				return err
			}
		default:
			return err
		}
	}
}

// ensurePostgresTemplate builds the migrated template database name on the
// server at serverURL unless it exists, under the advisory lock
// templateLockID so that concurrent test processes build it once.
//
// The template is migrated under a temporary name (a leftover of a build that
// crashed is dropped first), closed, set to allow no connections (so no
// session can keep a copy from being made) and only then renamed to name:
// a database under that name is always complete.
func ensurePostgresTemplate(ctx context.Context, serverURL, name string) error {
	conn, err := pgx.Connect(ctx, serverURL)
	if err != nil {
		return err
	}
	// Closing the session releases its advisory lock as well.
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", templateLockID); err != nil {
		return fmt.Errorf("lock: %w", err)
	}
	defer conn.Exec(context.Background(), "SELECT pg_advisory_unlock($1)", templateLockID)

	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		return err
	}
	if exists {
		return nil // built by another process while this one waited for the lock
	}

	build := name + "_build"
	buildIdent := pgx.Identifier{build}.Sanitize()
	if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+buildIdent+" WITH (FORCE)"); err != nil {
		return err
	}
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+buildIdent); err != nil {
		return err
	}
	buildURL, err := withDatabase(serverURL, build)
	if err != nil {
		return err
	}
	if err := migrateDatabase(ctx, buildURL, nil); err != nil {
		_, _ = conn.Exec(context.Background(), "DROP DATABASE IF EXISTS "+buildIdent+" WITH (FORCE)")
		return fmt.Errorf("migrate: %w", err)
	}
	if _, err := conn.Exec(ctx, "ALTER DATABASE "+buildIdent+" WITH ALLOW_CONNECTIONS false"); err != nil {
		return err
	}
	// The sessions of the closed pool may take a moment to end; renaming
	// waits for them.
	rename := "ALTER DATABASE " + buildIdent + " RENAME TO " + pgx.Identifier{name}.Sanitize()
	busyUntil := time.Now().Add(10 * time.Second)
	for {
		_, err := conn.Exec(ctx, rename)
		if err == nil {
			return nil
		}
		if pgCode(err) != pgObjectInUse || time.Now().After(busyUntil) {
			return err
		}
		if err := sleep(ctx, 50*time.Millisecond); err != nil {
			return err
		}
	}
}

// withDatabase returns serverURL with its path replaced by the database name.
func withDatabase(serverURL, name string) (string, error) {
	u, err := url.Parse(serverURL)
	if err != nil {
		return "", err
	}
	u.Path = "/" + name
	u.RawPath = ""
	return u.String(), nil
}

// pgCode returns the SQLSTATE of a PostgreSQL error, or "".
func pgCode(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code
	}
	return ""
}

// atoi returns the number s holds, or 0.
func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// sleep waits for d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-time.After(d):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
