package models

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/libtnb/sqlite"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
	moderncsqlite "modernc.org/sqlite"
)

// preparedStatements is how many distinct statements a SQLite database
// keeps prepared (gorm.Config.PrepareStmtMaxSize): the least recently used
// is closed beyond it.
const preparedStatements = 256

// Open connects to DATABASE_URL: "postgres://..." or "postgresql://..." is
// PostgreSQL; "sqlite:<path>" (or a bare path) is a SQLite file, opened in WAL
// mode with a busy timeout and immediate write transactions so the API and the
// worker can share it. It installs the tenant-scoping callbacks.
func Open(ctx context.Context, url string, log *slog.Logger) (*gorm.DB, error) {
	var dialector gorm.Dialector
	sqliteFile := false
	switch {
	case strings.HasPrefix(url, "postgres://"), strings.HasPrefix(url, "postgresql://"):
		dialector = postgres.Open(url)
	default:
		path := strings.TrimPrefix(url, "sqlite:")
		if path == "" {
			return nil, fmt.Errorf("empty SQLite path")
		}
		sep := "?"
		if strings.Contains(path, "?") {
			sep = "&"
		}
		// _time_format=sqlite writes times as SQLite's date functions
		// read them ("2006-01-02 15:04:05.999999999-07:00").
		dialector = sqlite.Open(path + sep + "_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)&_txlock=immediate&_time_format=sqlite")
		sqliteFile = true
		// SQLite's own POSIX advisory locks, not the Open File Description
		// locks the dialector turns on for the process (modernc.org/sqlite's
		// OFDLocking): with those, two processes sharing the file (the API
		// and the worker) waited on each other's locks, and a bulk job of
		// 1,000 items ran at 15 items/s instead of 65. The switch takes
		// effect only before the first database is opened; later calls
		// find it already off. MODERNC_SQLITE_OFD_LOCK, when set, decides
		// instead (for comparisons).
		if _, set := os.LookupEnv("MODERNC_SQLITE_OFD_LOCK"); !set {
			if _, err := moderncsqlite.OFDLocking(false); err != nil && !errors.Is(err, moderncsqlite.ErrOFDLockingTooLate) &&
				!errors.Is(err, moderncsqlite.ErrOFDLockingUnavailable) {
				return nil, fmt.Errorf("SQLite locking: %w", err)
			}
		}
	}
	db, err := gorm.Open(dialector, &gorm.Config{
		Logger:                 logger.Discard,
		NowFunc:                func() time.Time { return time.Now().UTC().Truncate(time.Microsecond) },
		SkipDefaultTransaction: true,
		TranslateError:         true,
		// On SQLite, statements stay prepared on their connection, so that
		// SQLite parses each one once rather than on every query (the
		// driver keeps a prepared statement's handle); a bounded number
		// of them (queries with IN lists differ by their length).
		// PostgreSQL's driver (pgx) keeps its own statement cache.
		PrepareStmt:        sqliteFile,
		PrepareStmtMaxSize: preparedStatements,
	})
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	sqlDB, err := db.DB()
	if err != nil {
		return nil, err
	}
	// Keep as many idle connections as open ones: with database/sql's
	// default of 2, any load above two requests in flight closes
	// connections on release and reopens them on the next request (on
	// SQLite each new connection runs the pragmas and parses the schema).
	maxOpen := 20
	if IsSQLite(db) {
		maxOpen = 8
	}
	sqlDB.SetMaxOpenConns(maxOpen)
	sqlDB.SetMaxIdleConns(maxOpen)
	sqlDB.SetConnMaxIdleTime(5 * time.Minute)
	pingCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := sqlDB.PingContext(pingCtx); err != nil {
		return nil, fmt.Errorf("connect to database: %w", err)
	}
	if err := registerTenantCallbacks(db); err != nil {
		return nil, err
	}
	if err := trackWrites(db); err != nil {
		return nil, err
	}
	if log != nil {
		log.Debug("database opened", "dialect", db.Name())
	}
	return db, nil
}

// IsSQLite reports whether db is a SQLite database.
func IsSQLite(db *gorm.DB) bool { return db.Name() == "sqlite" }

// Close closes the database's connection pool.
func Close(db *gorm.DB) error {
	sqlDB, err := db.DB()
	if err != nil {
		return err
	}
	return sqlDB.Close()
}

// Ping checks that the database answers.
func Ping(ctx context.Context, db *gorm.DB) error {
	sqlDB, err := db.DB()
	if err != nil {
		return err
	}
	return sqlDB.PingContext(ctx)
}
