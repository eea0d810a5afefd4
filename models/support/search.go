package support

import (
	"context"
	"slices"
	"strings"

	"github.com/telcoplatform/platform/models"
)

// Bounds of a ticket search.
const (
	MaxQuery      = 200 // characters of the keyword query
	MaxQueryWords = 10
)

// Sort orders of a ticket search.
const (
	OrderAsc  = "asc"
	OrderDesc = "desc"
)

// SearchSortFields returns the fields a ticket search sorts by.
func SearchSortFields() []string { return []string{"created_at", "updated_at", "priority", "status"} }

// TicketSearch is a ticket search: the filters of the list, a keyword
// query, one sort field with its order, and a page. It is the structure of
// both wire encodings (query parameters on GET, a JSON body on POST).
type TicketSearch struct {
	Filter TicketFilter // Filter.Query is the keyword query
	// Sort is created_at (default), updated_at, priority or status; Order
	// is asc or desc (default desc).
	Sort  string
	Order string
	// Page is 1-based (default 1); Limit is 1 to 200 (default 50).
	Page  int
	Limit int
}

// SearchTickets returns a page of the tickets visible to p that in selects
// (customers see their organization's only, as in ListTickets), with the
// page request it read. Every word of the keyword query must appear, in
// any case, in the title or the description. Errors: VALIDATION_ERROR.
func (s *Store) SearchTickets(ctx context.Context, p *models.Principal, in TicketSearch) ([]Ticket, int64, models.PageRequest, error) {
	var v models.Validator
	in.Sort, in.Order = strings.TrimSpace(in.Sort), strings.ToLower(strings.TrimSpace(in.Order))
	if in.Sort == "" {
		in.Sort = "created_at"
	}
	if in.Order == "" {
		in.Order = OrderDesc
	}
	v.Check(slices.Contains(SearchSortFields(), in.Sort), "sort.field", "must be one of "+joinList(SearchSortFields()))
	v.Check(in.Order == OrderAsc || in.Order == OrderDesc, "sort.order", "must be asc or desc")
	v.Check(in.Page >= 0, "pagination.page", "must be 1 or more")
	v.Check(in.Limit >= 0 && in.Limit <= models.MaxPageLimit, "pagination.limit", "must be between 1 and "+itoa(models.MaxPageLimit))
	// (page-1)*limit would overflow for the largest pages.
	limit := models.DefaultPageLimit
	if in.Limit > 0 {
		limit = in.Limit
	}
	v.Check(in.Page-1 <= models.MaxPageOffset/limit, "pagination.page", "must not skip more than "+itoa(models.MaxPageOffset)+" tickets")
	q, err := s.ticketQuery(ctx, p, in.Filter, &v)
	if err != nil {
		return nil, 0, models.PageRequest{}, err
	}
	pr := models.PageRequest{Limit: models.DefaultPageLimit, Sort: []models.SortField{{Field: in.Sort, Desc: in.Order == OrderDesc}}}
	if in.Limit > 0 {
		pr.Limit = in.Limit
	}
	if in.Page > 1 {
		pr.Offset = (in.Page - 1) * pr.Limit
	}
	out, total, err := s.pageTickets(ctx, q, pr)
	return out, total, pr, err
}

// keywords splits a search query into its lower-case words.
func keywords(q string) []string { return strings.Fields(strings.ToLower(q)) }

// likePattern escapes s for a LIKE ... ESCAPE '\' pattern that contains it.
func likePattern(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return "%" + r.Replace(strings.ToLower(s)) + "%"
}
