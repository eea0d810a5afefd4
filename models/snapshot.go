package models

import (
	"bytes"
	"context"
	"errors"
	"math"
	"strings"
	"sync"
	"time"

	"gorm.io/gorm"
)

// RowSnapshot is one row of a table as a read returned it: the values of
// its columns, as the database driver gave them, and the struct decoded
// from them. Two reads of a row that give equal values decode to equal
// structs, so whatever was derived from the first read's struct (an
// encoded answer, its ETag) is still exact for the second: a snapshot is
// a version of the row that no write can leave unchanged, whichever
// process or statement made the write.
type RowSnapshot[T any] struct {
	// Row is the decoded row. It is shared by every read that returned this
	// snapshot: never modified.
	Row *T

	values []any
	// The row's tenant columns, for a Read that trusts the snapshot
	// without reading the row (see RowVersion).
	organizationID, environment string
	// version is the table's version the reader knew before the read that
	// gave these values, readAt when that read was made.
	version RowVersion
	readAt  time.Time
}

// RowVersion is a table's version as a reader learnt it before reading
// a row of it: a number that every process of the platform raises after
// each commit that changed rows of the table (see OnWrites). Known is false
// when the reader has none (no shared Redis, a read inside a
// transaction): the row is then always read.
type RowVersion struct {
	Value int64
	Known bool
}

// RowSnapshotMaxAge is how long a snapshot is trusted without a read of
// its row while its table's version is unchanged: it bounds how long a
// write that no process of the platform told (a statement made on the
// database by hand) goes unseen.
const RowSnapshotMaxAge = time.Second

// trusted reports whether s may be returned without reading its row: its
// table's version is known and unchanged since the read that gave s, that
// read is younger than RowSnapshotMaxAge, and the row is in scope.
func (s *RowSnapshot[T]) trusted(scope Scope, ver RowVersion, now time.Time) bool {
	if s == nil || !ver.Known || !s.version.Known || s.version.Value != ver.Value || now.Sub(s.readAt) >= RowSnapshotMaxAge || now.Before(s.readAt) {
		return false
	}
	if scope.System {
		return true
	}
	if !scope.AllOrganizations && s.organizationID != scope.OrganizationID {
		return false
	}
	return scope.Environment == "" || s.environment == string(scope.Environment)
}

// RowReader reads one row of a tenant table (model T, with
// organization_id and environment columns) by its primary key id, as a
// RowSnapshot. Given the snapshot of an earlier read, a read that finds
// the row unchanged returns that snapshot as it is, without decoding the
// row again (no reflection, no JSON column decoded): the caller keeps
// what it derived from it. The query is the one GORM would run for
// Where("id = ?", id).Take, scoped the same way (see Scoped), and runs
// through GORM's row callbacks (tracing, transactions carried by ctx).
type RowReader[T any] struct {
	store *Store

	once    sync.Once
	err     error
	queries [4]string // by filter: none, environment, organization, both
}

// NewRowReader returns a RowReader of model T on s.
func NewRowReader[T any](s *Store) *RowReader[T] {
	return &RowReader[T]{store: s}
}

// prepare finds T's table and checks that it has the tenant columns.
func (r *RowReader[T]) prepare() {
	stmt := &gorm.Statement{DB: r.store.DB}
	if err := stmt.Parse(new(T)); err != nil {
		r.err = err
		return
	}
	sch := stmt.Schema
	if _, ok := sch.FieldsByDBName["organization_id"]; !ok {
		r.err = errors.New("snapshot reads need a tenant table: " + sch.Table + " has no organization_id")
		return
	}
	if _, ok := sch.FieldsByDBName["environment"]; !ok {
		r.err = errors.New("snapshot reads need a tenant table: " + sch.Table + " has no environment")
		return
	}
	for i := range r.queries {
		var b strings.Builder
		b.WriteString("SELECT * FROM " + sch.Table + " WHERE id = ?")
		if i&2 != 0 {
			b.WriteString(" AND organization_id = ?")
		}
		if i&1 != 0 {
			b.WriteString(" AND environment = ?")
		}
		b.WriteString(" LIMIT 1")
		r.queries[i] = b.String()
	}
}

// Read returns the row id visible in scope. ver is the table's version
// the caller learnt before calling (a zero RowVersion when it has none).
// When prev (a snapshot an earlier Read returned, or nil) is trusted
// (same known version, younger than RowSnapshotMaxAge, in scope), Read
// returns it without reading the row. Otherwise it reads the row: when
// prev holds the same values as the row now, it returns prev's row again
// (the same Row, not decoded again) in a snapshot of this read. Errors:
// gorm.ErrRecordNotFound (no such row in scope), the database's.
func (r *RowReader[T]) Read(ctx context.Context, scope Scope, id string, prev *RowSnapshot[T], ver RowVersion) (*RowSnapshot[T], error) {
	r.once.Do(r.prepare)
	if r.err != nil {
		return nil, r.err
	}
	now := time.Now()
	if prev.trusted(scope, ver, now) {
		return prev, nil
	}
	// The tenant filter of filterTenant, written out: a raw query has no
	// model for the callback to filter, and the four statements built once
	// spare this hot read GORM's clause building on every request
	// (TestRowReaderSnapshots checks the filter against the scopes).
	shape, args := 0, make([]any, 1, 3)
	args[0] = id
	if !scope.System {
		if !scope.AllOrganizations {
			shape |= 2
			args = append(args, scope.OrganizationID)
		}
		if scope.Environment != "" {
			shape |= 1
			args = append(args, scope.Environment)
		}
	}
	db := r.store.In(ctx, scope)
	rows, err := db.Raw(r.queries[shape], args...).Rows()
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return nil, err
		}
		return nil, gorm.ErrRecordNotFound
	}
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	values := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range values {
		ptrs[i] = &values[i]
	}
	if err := rows.Scan(ptrs...); err != nil {
		return nil, err
	}
	if prev != nil && sameValues(prev.values, values) {
		if prev.version == ver && !prev.readAt.Before(now.Add(-RowSnapshotMaxAge/2)) {
			return prev, rows.Close() // recent enough: no new snapshot to keep
		}
		again := *prev
		again.version, again.readAt = ver, now
		return &again, rows.Close()
	}
	snap := &RowSnapshot[T]{Row: new(T), values: values, version: ver, readAt: now}
	snap.organizationID, snap.environment = tenantOf(cols, values)
	if err := db.ScanRows(rows, snap.Row); err != nil {
		return nil, err
	}
	if err := rows.Close(); err != nil {
		return nil, err
	}
	return snap, nil
}

// tenantOf returns a row's organization_id and environment columns.
func tenantOf(cols []string, values []any) (organizationID, environment string) {
	for i, c := range cols {
		switch c {
		case "organization_id":
			organizationID = textOf(values[i])
		case "environment":
			environment = textOf(values[i])
		}
	}
	return organizationID, environment
}

func textOf(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []byte:
		return string(x)
	}
	return ""
}

// sameValues reports whether two rows' column values, as the driver gave
// them, are equal: same types, same values (times: same instant and
// offset). Anything else (a type the driver does not return) is unequal.
func sameValues(a, b []any) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !sameValue(a[i], b[i]) {
			return false
		}
	}
	return true
}

func sameValue(a, b any) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case string:
		y, ok := b.(string)
		return ok && x == y
	case []byte:
		y, ok := b.([]byte)
		return ok && bytes.Equal(x, y)
	case int64:
		y, ok := b.(int64)
		return ok && x == y
	case float64:
		y, ok := b.(float64)
		return ok && math.Float64bits(x) == math.Float64bits(y)
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case time.Time:
		y, ok := b.(time.Time)
		if !ok || !x.Equal(y) {
			return false
		}
		_, xo := x.Zone()
		_, yo := y.Zone()
		return xo == yo
	}
	return false
}
