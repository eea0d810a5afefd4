package models

import (
	"encoding/base64"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"
)

// Pagination bounds shared by every list (DECISIONS 2).
const (
	DefaultPageLimit = 50
	MaxPageLimit     = 200
	// MaxPageOffset bounds the items a list request may skip (offset, page
	// or cursor), so that offset + limit never overflows.
	MaxPageOffset = math.MaxInt32
)

// maxSnapshotMicros bounds the snapshot a cursor may carry (the end of
// year 9999), so that no database refuses the comparison.
var maxSnapshotMicros = time.Date(9999, 12, 31, 23, 59, 59, 999999000, time.UTC).UnixMicro()

// SortField is one `field:asc|desc` item of a sort parameter.
type SortField struct {
	Field string
	Desc  bool
}

// PageRequest is a parsed list request: a window and an order, and the
// snapshot its cursor pins the list to.
//
// A cursor is stable under inserts: the first page of a list that has a
// created_at sort field records the newest created_at of the rows it
// pages over (its snapshot), the cursors of that answer carry it, and the
// later pages only count and show rows created no later than it. Rows
// created after the first page therefore neither shift the later pages
// nor change their total; a client starts again from the first page to
// see them. offset and page are positions: they start a new snapshot.
// Only a PageRequest of ParsePage takes a snapshot (one built by hand
// pages by position), and it serves one list: reading a second list with
// it would record that list's snapshot for the next cursor.
type PageRequest struct {
	Limit  int
	Offset int
	Sort   []SortField

	// asOf is the snapshot the request's cursor carries (unix
	// microseconds); Paginate applies it. Unset: none.
	asOf snapshot
	// taken, allocated by ParsePage for a request without a snapshot, is
	// where Paginate records the snapshot it takes for the next cursor; the
	// pointer is shared by the copies of the request that Paginate receives.
	taken *snapshot
}

// snapshot bounds a list to the rows created at or before micros (unix
// microseconds, UTC).
type snapshot struct {
	set    bool
	micros int64
}

// ListQuery is the raw list parameters every list accepts.
type ListQuery struct {
	Limit   int
	PerPage int
	Offset  int
	Page    int
	Cursor  string
	Sort    string
}

// ParsePage validates q into a PageRequest. limit (alias per_page) is 1..200,
// default 50; offset >= 0, or page >= 1, or an opaque cursor from a previous
// answer; sort is comma-separated field:asc|desc. Errors: VALIDATION_ERROR.
func ParsePage(q ListQuery) (PageRequest, error) {
	var v Validator
	pr := PageRequest{Limit: DefaultPageLimit}
	limit := q.Limit
	if limit == 0 {
		limit = q.PerPage
	}
	if limit != 0 {
		v.Check(limit >= 1 && limit <= MaxPageLimit, "limit", fmt.Sprintf("must be between 1 and %d", MaxPageLimit))
		pr.Limit = limit
	}
	v.Check(q.Offset >= 0, "offset", "must not be negative")
	v.Check(q.Page >= 0, "page", "must be 1 or more")
	tooFar := fmt.Sprintf("must not skip more than %d items", MaxPageOffset)
	switch {
	case q.Cursor != "":
		off, snap, err := decodeCursor(q.Cursor)
		v.Check(err == nil && off <= MaxPageOffset, "cursor", "is not a cursor returned by this API")
		pr.Offset, pr.asOf = off, snap
	case q.Page > 0:
		// (page-1)*limit would overflow for the largest pages.
		ok := q.Page-1 <= MaxPageOffset/max(pr.Limit, 1)
		v.Check(ok, "page", tooFar)
		if ok {
			pr.Offset = (q.Page - 1) * pr.Limit
		}
	default:
		v.Check(q.Offset <= MaxPageOffset, "offset", tooFar)
		pr.Offset = q.Offset
	}
	if !pr.asOf.set {
		pr.taken = &snapshot{}
	}
	if q.Sort != "" {
		for _, item := range strings.Split(q.Sort, ",") {
			field, dir, _ := strings.Cut(strings.TrimSpace(item), ":")
			dir = strings.ToLower(dir)
			if field == "" || (dir != "" && dir != "asc" && dir != "desc") {
				v.Add("sort", fmt.Sprintf("%q must be field:asc or field:desc", item))
				continue
			}
			pr.Sort = append(pr.Sort, SortField{Field: field, Desc: dir == "desc"})
		}
	}
	if err := v.Err(); err != nil {
		return PageRequest{}, err
	}
	return pr, nil
}

// NextCursor returns the cursor of the page after pr, or "" when total is
// reached. It carries pr's snapshot: the one of pr's cursor, or the one
// Paginate took while reading pr.
func (pr PageRequest) NextCursor(total int64) string {
	next := pr.Offset + pr.Limit
	if int64(next) >= total {
		return ""
	}
	return pr.CursorAt(next)
}

// CursorAt returns the cursor of the page of pr's list that starts at
// offset, within pr's snapshot (see NextCursor).
func (pr PageRequest) CursorAt(offset int) string {
	return encodeCursor(offset, pr.snapshot())
}

// snapshot is the snapshot pr's list is read in: its cursor's, else the
// one Paginate took, else none.
func (pr PageRequest) snapshot() snapshot {
	if !pr.asOf.set && pr.taken != nil {
		return *pr.taken
	}
	return pr.asOf
}

// PageNumber returns the 1-based page number of pr.
func (pr PageRequest) PageNumber() int { return pr.Offset/pr.Limit + 1 }

// Pages returns the number of pages for total items.
func (pr PageRequest) Pages(total int64) int {
	return int((total + int64(pr.Limit) - 1) / int64(pr.Limit))
}

// encodeCursor is the opaque cursor of the page at offset: "o:<offset>",
// or "o:<offset>:<snapshot in unix microseconds>".
func encodeCursor(offset int, snap snapshot) string {
	s := "o:" + strconv.Itoa(offset)
	if snap.set {
		s += ":" + strconv.FormatInt(snap.micros, 10)
	}
	return base64.RawURLEncoding.EncodeToString([]byte(s))
}

// decodeCursor reads a cursor of encodeCursor (cursors without a snapshot
// were the only ones before snapshots, and clients may still hold them).
func decodeCursor(c string) (int, snapshot, error) {
	bad := fmt.Errorf("bad cursor")
	raw, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return 0, snapshot{}, err
	}
	s, ok := strings.CutPrefix(string(raw), "o:")
	if !ok {
		return 0, snapshot{}, bad
	}
	s, at, hasSnap := strings.Cut(s, ":")
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0, snapshot{}, bad
	}
	if !hasSnap {
		return n, snapshot{}, nil
	}
	micros, err := strconv.ParseInt(at, 10, 64)
	if err != nil || micros < 0 || micros > maxSnapshotMicros {
		return 0, snapshot{}, bad
	}
	return n, snapshot{set: true, micros: micros}, nil
}

// SortFields maps the sort names a list accepts to their columns.
type SortFields map[string]string

// Paginate counts the rows of q, then loads the requested window into dest,
// ordered by the requested sort (default: newest first, then id).
//
// When allowed has a "created_at" field, the list is read in a snapshot
// (see PageRequest), bounded on that field's column: pr's cursor's, or,
// for a request of ParsePage without one that has a next page, the newest
// created_at of q's rows, taken with one more query and recorded for
// pr.NextCursor. Errors: VALIDATION_ERROR (unknown sort field).
func Paginate(q *gorm.DB, pr PageRequest, allowed SortFields, dest any) (int64, error) {
	createdCol, snapshots := allowed["created_at"]
	if snapshots && pr.asOf.set {
		q = q.Session(&gorm.Session{}).Where(createdCol+" <= ?", time.UnixMicro(pr.asOf.micros).UTC())
	}
	var total int64
	if err := q.Session(&gorm.Session{}).Count(&total).Error; err != nil {
		return 0, DBErr(err)
	}
	if snapshots && !pr.asOf.set && pr.taken != nil && int64(pr.Offset)+int64(pr.Limit) < total {
		snap, err := newestCreated(q, createdCol)
		if err != nil {
			return 0, err
		}
		*pr.taken = snap
		if snap.set {
			q = q.Session(&gorm.Session{}).Where(createdCol+" <= ?", time.UnixMicro(snap.micros).UTC())
		}
	}
	ordered := q.Session(&gorm.Session{})
	if len(pr.Sort) == 0 {
		if _, ok := allowed["created_at"]; ok {
			ordered = ordered.Order("created_at DESC")
		}
	}
	for _, s := range pr.Sort {
		col, ok := allowed[s.Field]
		if !ok {
			names := make([]string, 0, len(allowed))
			for k := range allowed {
				names = append(names, k)
			}
			slices.Sort(names)
			return 0, Invalid(FieldIssue{Field: "sort", Issue: fmt.Sprintf("cannot sort by %q; sortable fields: %s", s.Field, strings.Join(names, ", "))})
		}
		dir := " ASC"
		if s.Desc {
			dir = " DESC"
		}
		ordered = ordered.Order(col + dir)
	}
	ordered = ordered.Order("id ASC")
	if err := ordered.Limit(pr.Limit).Offset(pr.Offset).Find(dest).Error; err != nil {
		return 0, DBErr(err)
	}
	return total, nil
}

// newestCreated is the snapshot of q's rows: the largest value of col,
// rounded up to the microsecond (SQLite keeps what it is given, which may
// be finer; PostgreSQL keeps microseconds). No snapshot for a query that
// groups or orders rows (no single maximum, and PostgreSQL would refuse
// the order), an empty one, or a value that is not a time of years 1970
// to 9999.
func newestCreated(q *gorm.DB, col string) (snapshot, error) {
	if _, grouped := q.Statement.Clauses["GROUP BY"]; grouped {
		return snapshot{}, nil
	}
	if _, ordered := q.Statement.Clauses["ORDER BY"]; ordered {
		return snapshot{}, nil
	}
	tx := q.Session(&gorm.Session{}).Select("MAX(" + col + ")")
	row := tx.Row()
	if tx.Error != nil || row == nil {
		return snapshot{}, DBErr(tx.Error)
	}
	var v any
	if err := row.Scan(&v); err != nil {
		return snapshot{}, DBErr(err)
	}
	t, ok := dbTime(v)
	if !ok || t.Year() < 1970 || t.Year() > 9999 {
		return snapshot{}, nil
	}
	micros := t.UnixMicro()
	if t.Nanosecond()%1000 != 0 {
		micros++
	}
	if micros > maxSnapshotMicros { // a cursor could not carry it
		return snapshot{}, nil
	}
	return snapshot{set: true, micros: micros}, nil
}

// dbTimeLayouts are the text forms of a time a SQLite aggregate answers
// (those modernc.org/sqlite writes and reads).
var dbTimeLayouts = []string{
	"2006-01-02 15:04:05.999999999-07:00",
	"2006-01-02T15:04:05.999999999-07:00",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04:05.999999999",
	time.RFC3339Nano,
}

// dbTime reads a time a database answered: a time (PostgreSQL) or its
// text (SQLite, for an expression such as MAX()).
func dbTime(v any) (time.Time, bool) {
	switch v := v.(type) {
	case time.Time:
		return v, true
	case []byte:
		return dbTime(string(v))
	case string:
		for _, layout := range dbTimeLayouts {
			if t, err := time.Parse(layout, v); err == nil {
				return t, true
			}
		}
	}
	return time.Time{}, false
}
