package models_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/testenv"
)

// cursorOf encodes a cursor's raw text as the API does.
func cursorOf(raw string) string { return base64.RawURLEncoding.EncodeToString([]byte(raw)) }

// rawCursor is the text of a cursor the API answered.
func rawCursor(t *testing.T, c string) string {
	t.Helper()
	raw, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		t.Fatalf("cursor %q is not base64: %v", c, err)
	}
	return string(raw)
}

// TestCursorForms: a cursor without a snapshot ("o:<offset>", the only
// form before snapshots, which clients may still hold) and one with a
// snapshot ("o:<offset>:<unix microseconds>") are read, the next cursor
// keeps the snapshot, and anything else is "not a cursor returned by this
// API".
func TestCursorForms(t *testing.T) {
	for _, tc := range []struct {
		raw      string
		offset   int
		nextText string // the raw next cursor of a 10-item page
	}{
		{"o:0", 0, "o:10"},
		{"o:40", 40, "o:50"},
		{"o:2:1767225600123456", 2, "o:12:1767225600123456"},
		{"o:0:0", 0, "o:10:0"},
		{fmt.Sprintf("o:%d", models.MaxPageOffset), models.MaxPageOffset, ""},
	} {
		t.Run(tc.raw, func(t *testing.T) {
			pr, err := models.ParsePage(models.ListQuery{Limit: 10, Cursor: cursorOf(tc.raw)})
			if err != nil {
				t.Fatal(err)
			}
			if pr.Offset != tc.offset || pr.Limit != 10 {
				t.Fatalf("window %+v, want offset %d", pr, tc.offset)
			}
			if tc.nextText == "" {
				return
			}
			next := pr.NextCursor(int64(tc.offset) + 100)
			if got := rawCursor(t, next); got != tc.nextText {
				t.Fatalf("next cursor %q, want %q", got, tc.nextText)
			}
			again, err := models.ParsePage(models.ListQuery{Limit: 10, Cursor: next})
			if err != nil || again.Offset != tc.offset+10 {
				t.Fatalf("next cursor read back as %+v, %v", again, err)
			}
			if pr.NextCursor(int64(tc.offset)+10) != "" {
				t.Fatal("a next cursor past the end")
			}
		})
	}
	for _, c := range []string{
		"!!", "not base64!", cursorOf("o"), cursorOf("o:"), cursorOf("x:1"), cursorOf("o:-1"), cursorOf("o:+"), cursorOf("o:1.5"),
		cursorOf("o:1:"), cursorOf("o::5"), cursorOf("o:1:abc"), cursorOf("o:1:-5"), cursorOf("o:1:2:3"), cursorOf("o:1: 5"),
		cursorOf("o:1:99999999999999999999"), cursorOf("o:1:" + strconv.FormatInt(time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro(), 10)),
		cursorOf(fmt.Sprintf("o:%d", int64(models.MaxPageOffset)+1)), cursorOf(fmt.Sprintf("o:%d:5", int64(models.MaxPageOffset)+1)),
		base64.StdEncoding.EncodeToString([]byte("o:12")), // padded: not the API's encoding
	} {
		_, err := models.ParsePage(models.ListQuery{Cursor: c})
		if err == nil {
			t.Errorf("cursor %q (%q) accepted", c, rawCursor(t, strings.TrimRight(c, "=")))
			continue
		}
		if issue := fieldsOf(t, err)["cursor"]; issue != "is not a cursor returned by this API" {
			t.Errorf("cursor %q: issue %q", c, issue)
		}
	}
}

// TestPositionsHaveNoSnapshotUntilRead: offset and page requests are
// positions; before a list is read (and for lists held whole, never read
// by Paginate) their next cursor is the plain offset, and a PageRequest
// built by hand never takes a snapshot.
func TestPositionsHaveNoSnapshotUntilRead(t *testing.T) {
	for _, q := range []models.ListQuery{{Limit: 5}, {Limit: 5, Offset: 5}, {Limit: 5, Page: 2}} {
		pr, err := models.ParsePage(q)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := rawCursor(t, pr.NextCursor(100)), "o:"+strconv.Itoa(pr.Offset+5); got != want {
			t.Errorf("%+v: next cursor %q, want %q", q, got, want)
		}
	}
	if got := rawCursor(t, models.PageRequest{Limit: 3, Offset: 3}.CursorAt(7)); got != "o:7" {
		t.Errorf("CursorAt: %q", got)
	}
}

// pageProbe is a row of a table made for TestPaginateReadsInASnapshot.
type pageProbe struct {
	ID        string `gorm:"primaryKey;size:40"`
	Name      string `gorm:"size:40;not null"`
	CreatedAt time.Time
}

// TestPaginateReadsInASnapshot: following next cursors from a first page
// shows every row of that moment exactly once and none created later,
// whatever the order, with the total of that moment; offset and page
// requests see the current rows; lists without a created_at sort field
// keep plain offsets.
func TestPaginateReadsInASnapshot(t *testing.T) {
	s := testenv.Store(t)
	ctx := context.Background()
	db := s.DB.WithContext(ctx)
	if err := db.AutoMigrate(&pageProbe{}); err != nil {
		t.Fatal(err)
	}
	base := time.Now().UTC().Truncate(time.Second).Add(-time.Hour)
	add := func(name string, at time.Time) {
		t.Helper()
		if err := db.Create(&pageProbe{ID: "pp_" + name, Name: name, CreatedAt: at}).Error; err != nil {
			t.Fatal(err)
		}
	}
	for i := range 5 {
		// The newest has nanoseconds: SQLite keeps them, so the snapshot
		// must round up to the microsecond not to lose it.
		add(fmt.Sprintf("old%d", i), base.Add(time.Duration(i)*time.Millisecond+time.Duration(i)*789))
	}
	// now lists the names of the rows there are.
	now := func() []string {
		t.Helper()
		var names []string
		if err := db.Model(&pageProbe{}).Order("name").Pluck("name", &names).Error; err != nil {
			t.Fatal(err)
		}
		return names
	}
	sorts := models.SortFields{"created_at": "created_at", "name": "name"}
	list := func(q models.ListQuery, allowed models.SortFields) ([]string, int64, string) {
		t.Helper()
		pr, err := models.ParsePage(q)
		if err != nil {
			t.Fatal(err)
		}
		var rows []pageProbe
		total, err := models.Paginate(db.Model(&pageProbe{}).Where("name <> ?", "excluded"), pr, allowed, &rows)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, r := range rows {
			names = append(names, r.Name)
		}
		return names, total, pr.NextCursor(total)
	}
	created := 0
	for _, sort := range []string{"", "created_at:asc", "name:desc"} {
		t.Run("sort="+sort, func(t *testing.T) {
			originals := now()
			seen, total, next := list(models.ListQuery{Limit: 2, Sort: sort}, sorts)
			if total != int64(len(originals)) || next == "" || !strings.HasPrefix(rawCursor(t, next), "o:2:") {
				t.Fatalf("first page: total %d, next cursor %q", total, rawCursor(t, next))
			}
			// New rows, newer than the snapshot, and named to sort first
			// and last.
			for _, name := range []string{"aaa", "zzz"} {
				created++
				add(fmt.Sprintf("%s%d", name, created), time.Now().UTC())
			}
			for pages := 1; next != ""; pages++ {
				if pages > 10 {
					t.Fatal("too many pages")
				}
				var names []string
				names, total, next = list(models.ListQuery{Limit: 2, Sort: sort, Cursor: next}, sorts)
				if total != int64(len(originals)) {
					t.Fatalf("page %d: total %d, want the first page's %d", pages+1, total, len(originals))
				}
				seen = append(seen, names...)
			}
			slices.Sort(seen)
			if !slices.Equal(seen, originals) {
				t.Fatalf("pages showed %v, want each of %v once", seen, originals)
			}
		})
	}
	t.Run("offset and page are positions", func(t *testing.T) {
		for _, q := range []models.ListQuery{{Limit: 2, Offset: 2}, {Limit: 2, Page: 2}} {
			_, total, next := list(q, sorts)
			if want := int64(5 + created); total != want {
				t.Errorf("%+v: total %d, want %d", q, total, want)
			}
			if !strings.HasPrefix(rawCursor(t, next), "o:4:") {
				t.Errorf("%+v: next cursor %q has no snapshot", q, rawCursor(t, next))
			}
		}
	})
	t.Run("without a created_at sort field", func(t *testing.T) {
		_, total, next := list(models.ListQuery{Limit: 2, Sort: "name:asc"}, models.SortFields{"name": "name"})
		if total != int64(5+created) || rawCursor(t, next) != "o:2" {
			t.Fatalf("total %d, next cursor %q", total, rawCursor(t, next))
		}
	})
	t.Run("a PageRequest made by hand", func(t *testing.T) {
		pr := models.PageRequest{Limit: 2}
		var rows []pageProbe
		total, err := models.Paginate(db.Model(&pageProbe{}), pr, sorts, &rows)
		if err != nil || len(rows) != 2 || rawCursor(t, pr.NextCursor(total)) != "o:2" {
			t.Fatalf("%d rows, total %d, next %q, %v", len(rows), total, rawCursor(t, pr.NextCursor(total)), err)
		}
	})
	t.Run("the query is left as it was", func(t *testing.T) {
		q := db.Model(&pageProbe{}).Where("name LIKE ?", "old%")
		pr, _ := models.ParsePage(models.ListQuery{Limit: 1})
		var rows []pageProbe
		if _, err := models.Paginate(q, pr, sorts, &rows); err != nil {
			t.Fatal(err)
		}
		var n int64
		if err := q.Session(&gorm.Session{}).Count(&n).Error; err != nil || n != 5 {
			t.Fatalf("the query counts %d after Paginate, %v", n, err)
		}
	})
}
