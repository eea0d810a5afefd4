package models

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"gorm.io/gorm"
)

// WriteNotice is told, after each commit, which of the watched tables the
// committed statements changed rows of (see OnWrites).
type WriteNotice func(ctx context.Context, tables []string)

// writeWatch is what OnWrites installed: the tables and the notice.
type writeWatch struct {
	tables []string
	notice WriteNotice
}

// writeTracker is the database's connection pool (database/sql's, or
// GORM's prepared statements over it) seen through the statements it
// runs: every statement of the process passes through it, GORM's and
// raw ones alike. A statement that changes rows of a watched table is
// told once it is committed: at once outside a transaction, at the commit of its
// transaction otherwise (never for a rollback). Open installs it with no
// watch, which costs a pointer load per statement. Statements run outside
// GORM, on the *sql.DB itself, are not seen.
type writeTracker struct {
	pool  gorm.ConnPool
	watch atomic.Pointer[writeWatch]
}

// OnWrites makes db tell notice, after each commit, which of tables the
// committed statements may have changed rows of: an UPDATE, a DELETE, an
// upsert or any other statement that is neither a read nor a plain INSERT
// and names the table (raw SQL included).
// The notice runs on the committing goroutine, after the commit, before
// the caller goes on, so a reader that learns of it afterwards reads the
// committed rows. A later call replaces the watch; a nil notice ends it.
// Errors: db was not opened by Open.
func OnWrites(db *gorm.DB, tables []string, notice WriteNotice) error {
	t, ok := db.ConnPool.(*writeTracker)
	if !ok {
		return errors.New("write notices need a database opened by models.Open")
	}
	if notice == nil {
		t.watch.Store(nil)
		return nil
	}
	t.watch.Store(&writeWatch{tables: append([]string(nil), tables...), notice: notice})
	return nil
}

// trackWrites puts a writeTracker in front of db's connection pool and
// registers its callbacks.
func trackWrites(db *gorm.DB) error {
	t := &writeTracker{pool: db.ConnPool}
	db.ConnPool = t
	db.Statement.ConnPool = t
	cb := db.Callback()
	for _, r := range []struct {
		name string
		reg  func(string, func(*gorm.DB)) error
	}{
		{"gorm:create", cb.Create().After("gorm:create").Register},
		{"gorm:query", cb.Query().After("gorm:query").Register},
		{"gorm:update", cb.Update().After("gorm:update").Register},
		{"gorm:delete", cb.Delete().After("gorm:delete").Register},
		{"gorm:raw", cb.Raw().After("gorm:raw").Register},
		{"gorm:row", cb.Row().After("gorm:row").Register},
	} {
		if err := r.reg("platform:write_notice_"+strings.TrimPrefix(r.name, "gorm:"), t.noticeCommitted); err != nil {
			return err
		}
	}
	return nil
}

// written returns the watched tables that query may have changed rows
// of, or nil: none for a read (SELECT, or a WITH … SELECT without a write
// keyword) or a plain INSERT (a new row: no reader has kept it, and ids
// are never reused), the tables whose name the statement holds otherwise
// (UPDATE, DELETE, an INSERT that updates on conflict or replaces). A
// name within a longer one counts too: a notice too many costs a reader
// one read of its row, a notice missed would leave it an old answer.
func (w *writeWatch) written(query string) []string {
	q := strings.TrimLeft(query, " \t\r\n(")
	if w == nil || hasPrefixFold(q, "SELECT") {
		return nil
	}
	lower := strings.ToLower(q)
	var out []string
	for _, table := range w.tables {
		if strings.Contains(lower, table) {
			out = append(out, table)
		}
	}
	if len(out) == 0 || !changesRows(lower) {
		return nil
	}
	return out
}

// changesRows reports whether lower, a statement in lower case that is
// not a SELECT, may change existing rows: anything but a WITH query with
// no insert, update or delete in it, and an insert with no on conflict
// or replace.
func changesRows(lower string) bool {
	switch {
	case strings.HasPrefix(lower, "with"):
		return strings.Contains(lower, "insert") || strings.Contains(lower, "update") || strings.Contains(lower, "delete")
	case strings.HasPrefix(lower, "insert"):
		return strings.Contains(lower, "conflict") || strings.Contains(lower, "replace")
	}
	return true
}

// PrepareContext implements gorm.ConnPool.
func (t *writeTracker) PrepareContext(ctx context.Context, query string) (*sql.Stmt, error) {
	return t.pool.PrepareContext(ctx, query)
}

// ExecContext implements gorm.ConnPool.
func (t *writeTracker) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return t.pool.ExecContext(ctx, query, args...)
}

// QueryContext implements gorm.ConnPool.
func (t *writeTracker) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return t.pool.QueryContext(ctx, query, args...)
}

// QueryRowContext implements gorm.ConnPool.
func (t *writeTracker) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return t.pool.QueryRowContext(ctx, query, args...)
}

// noticeCommitted is the GORM callback run after every statement (create,
// query, update, delete, raw, row): a statement made outside a
// transaction is committed once GORM has run it (and, for an INSERT …
// RETURNING, read and closed its rows, which a notice from the pool's
// QueryContext would precede), so it is told here. The exception is a
// statement whose rows the caller reads (Row, Rows): it is told when
// GORM hands the rows over, possibly before the database commits it, so
// a reader in between may keep the old row for up to
// RowSnapshotMaxAge (no code of the platform changes rows that way).
// Statements of a transaction are told at its commit (trackedTx). A
// statement run on a pinned connection (the migrations) or through a
// Session with PrepareStmt (which wraps the pool anew; not used) is not
// told.
func (t *writeTracker) noticeCommitted(db *gorm.DB) {
	w := t.watch.Load()
	if w == nil || db.Statement.ConnPool != gorm.ConnPool(t) {
		return
	}
	if tables := w.written(db.Statement.SQL.String()); len(tables) > 0 {
		w.notice(context.WithoutCancel(db.Statement.Context), tables)
	}
}

// BeginTx implements gorm.ConnPoolBeginner: the transaction notes what
// its statements write and tells it at its commit.
func (t *writeTracker) BeginTx(ctx context.Context, opts *sql.TxOptions) (gorm.ConnPool, error) {
	var (
		tx  gorm.ConnPool
		err error
	)
	switch b := t.pool.(type) {
	case gorm.TxBeginner:
		tx, err = b.BeginTx(ctx, opts)
	case gorm.ConnPoolBeginner:
		tx, err = b.BeginTx(ctx, opts)
	default:
		return nil, gorm.ErrInvalidTransaction
	}
	if err != nil {
		return nil, err
	}
	committer, ok := tx.(gorm.TxCommitter)
	if !ok {
		return nil, gorm.ErrInvalidTransaction
	}
	return &trackedTx{tracker: t, ctx: ctx, tx: tx, committer: committer}, nil
}

// GetDBConn implements gorm.GetDBConnector (gorm.DB.DB).
func (t *writeTracker) GetDBConn() (*sql.DB, error) {
	switch p := t.pool.(type) {
	case *sql.DB:
		return p, nil
	case gorm.GetDBConnector:
		return p.GetDBConn()
	}
	return nil, gorm.ErrInvalidDB
}

// Ping checks the connection (gorm.Open's ping).
func (t *writeTracker) Ping() error {
	db, err := t.GetDBConn()
	if err != nil {
		return err
	}
	return db.Ping()
}

// trackedTx is a transaction begun through a writeTracker: it collects
// the watched tables its statements change and tells them after Commit
// (those of a savepoint rolled back too: a notice too many).
type trackedTx struct {
	tracker   *writeTracker
	ctx       context.Context
	tx        gorm.ConnPool
	committer gorm.TxCommitter

	mu      sync.Mutex
	written []string
}

func (x *trackedTx) note(query string) {
	tables := x.tracker.watch.Load().written(query)
	if len(tables) == 0 {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, t := range tables {
		if !slices.Contains(x.written, t) {
			x.written = append(x.written, t)
		}
	}
}

// pool is where statements of the transaction run. A savepoint's
// statements skip GORM's prepared statements, as GORM's own SavePoint
// does (each has its own name: preparing them would only fill the cache).
func (x *trackedTx) pool(query string) gorm.ConnPool {
	if p, ok := x.tx.(*gorm.PreparedStmtTX); ok && (hasPrefixFold(query, "SAVEPOINT ") || hasPrefixFold(query, "ROLLBACK TO SAVEPOINT ") || hasPrefixFold(query, "RELEASE SAVEPOINT ")) {
		return p.Tx
	}
	return x.tx
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// PrepareContext implements gorm.ConnPool.
func (x *trackedTx) PrepareContext(ctx context.Context, query string) (*sql.Stmt, error) {
	return x.tx.PrepareContext(ctx, query)
}

// ExecContext implements gorm.ConnPool.
func (x *trackedTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	x.note(query)
	return x.pool(query).ExecContext(ctx, query, args...)
}

// QueryContext implements gorm.ConnPool.
func (x *trackedTx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	x.note(query)
	return x.tx.QueryContext(ctx, query, args...)
}

// QueryRowContext implements gorm.ConnPool.
func (x *trackedTx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	x.note(query)
	return x.tx.QueryRowContext(ctx, query, args...)
}

// GetDBConn implements gorm.GetDBConnector (gorm.DB.DB in a transaction).
func (x *trackedTx) GetDBConn() (*sql.DB, error) { return x.tracker.GetDBConn() }

// StmtContext implements gorm.Tx.
func (x *trackedTx) StmtContext(ctx context.Context, stmt *sql.Stmt) *sql.Stmt {
	if s, ok := x.tx.(interface {
		StmtContext(context.Context, *sql.Stmt) *sql.Stmt
	}); ok {
		return s.StmtContext(ctx, stmt)
	}
	return stmt
}

// Commit implements gorm.TxCommitter: the watched tables written are
// told once the commit returned (even with an error, which may come after
// the database committed).
func (x *trackedTx) Commit() error {
	err := x.committer.Commit()
	x.mu.Lock()
	written := x.written
	x.written = nil
	x.mu.Unlock()
	if w := x.tracker.watch.Load(); w != nil && len(written) > 0 {
		w.notice(context.WithoutCancel(x.ctx), written)
	}
	return err
}

// Rollback implements gorm.TxCommitter: nothing was written.
func (x *trackedTx) Rollback() error {
	x.mu.Lock()
	x.written = nil
	x.mu.Unlock()
	return x.committer.Rollback()
}
