package models

import (
	"encoding/base64"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

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

// SortField is one `field:asc|desc` item of a sort parameter.
type SortField struct {
	Field string
	Desc  bool
}

// PageRequest is a parsed list request: a window and an order.
type PageRequest struct {
	Limit  int
	Offset int
	Sort   []SortField
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
		off, err := decodeCursor(q.Cursor)
		v.Check(err == nil && off <= MaxPageOffset, "cursor", "is not a cursor returned by this API")
		pr.Offset = off
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

// NextCursor returns the cursor of the page after pr, or "" when total is reached.
func (pr PageRequest) NextCursor(total int64) string {
	next := pr.Offset + pr.Limit
	if int64(next) >= total {
		return ""
	}
	return base64.RawURLEncoding.EncodeToString([]byte("o:" + strconv.Itoa(next)))
}

// PageNumber returns the 1-based page number of pr.
func (pr PageRequest) PageNumber() int { return pr.Offset/pr.Limit + 1 }

// Pages returns the number of pages for total items.
func (pr PageRequest) Pages(total int64) int {
	return int((total + int64(pr.Limit) - 1) / int64(pr.Limit))
}

func decodeCursor(c string) (int, error) {
	raw, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return 0, err
	}
	s, ok := strings.CutPrefix(string(raw), "o:")
	if !ok {
		return 0, fmt.Errorf("bad cursor")
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("bad cursor")
	}
	return n, nil
}

// SortFields maps the sort names a list accepts to their columns.
type SortFields map[string]string

// Paginate counts the rows of q, then loads the requested window into dest,
// ordered by the requested sort (default: newest first, then id).
// Errors: VALIDATION_ERROR (unknown sort field).
func Paginate(q *gorm.DB, pr PageRequest, allowed SortFields, dest any) (int64, error) {
	var total int64
	if err := q.Session(&gorm.Session{}).Count(&total).Error; err != nil {
		return 0, DBErr(err)
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
