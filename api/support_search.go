package api

import (
	"context"
	"net/http"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/support"
)

// TicketSearchParams is the query form of a ticket search (GET).
type TicketSearchParams struct {
	Status       string `query:"status" maxLength:"200" doc:"Comma-separated statuses" example:"open,escalated"`
	Priority     string `query:"priority" maxLength:"100" doc:"Comma-separated priorities" example:"high,critical"`
	CreatedAfter string `query:"created_after" maxLength:"40" doc:"RFC 3339 timestamp"`
	Category     string `query:"category" maxLength:"40" example:"network"`
	AssignedTo   string `query:"assigned_to" maxLength:"64" doc:"An agent's user id"`
	CustomerID   string `query:"customer_id" maxLength:"64" doc:"Tickets of this customer (cust_); provider staff see every customer's"`
	Q            string `query:"q" maxLength:"200" doc:"Keywords: every word must appear, in any case, in the title or the description" example:"packet loss"`
	Sort         string `query:"sort" maxLength:"40" doc:"field:order; fields created_at, updated_at, priority, status; order asc or desc" example:"priority:desc"`
	Limit        int    `query:"limit" minimum:"1" maximum:"200" doc:"Items per page (1-200, default 50)"`
	PerPage      int    `query:"per_page" minimum:"1" maximum:"200" doc:"Alias of limit"`
	Offset       int    `query:"offset" minimum:"0" maximum:"2147483647" doc:"Items to skip"`
	Page         int    `query:"page" minimum:"1" doc:"1-based page number (instead of offset)"`
	Cursor       string `query:"cursor" maxLength:"200" doc:"Opaque cursor from pagination.next_cursor (wins over page and offset)"`
}

// TicketSearchFilters are the filters of a ticket search body.
type TicketSearchFilters struct {
	Status       []string `json:"status,omitempty" maxItems:"6" doc:"Statuses" example:"[\"open\",\"escalated\"]"`
	Priority     []string `json:"priority,omitempty" maxItems:"4" doc:"Priorities" example:"[\"high\",\"critical\"]"`
	CreatedAfter string   `json:"created_after,omitempty" maxLength:"40" doc:"RFC 3339 timestamp"`
	Category     string   `json:"category,omitempty" maxLength:"40"`
	AssignedTo   string   `json:"assigned_to,omitempty" maxLength:"64" doc:"An agent's user id"`
	CustomerID   string   `json:"customer_id,omitempty" maxLength:"64" doc:"A customer (cust_)"`
}

// TicketSearchSort is the order of a ticket search.
type TicketSearchSort struct {
	Field string `json:"field,omitempty" maxLength:"40" doc:"created_at (default), updated_at, priority or status"`
	Order string `json:"order,omitempty" maxLength:"8" doc:"asc or desc (default desc)"`
}

// TicketSearchPagination is the page of a ticket search: limit, and
// offset or page, or cursor, as the query parameters of every list.
type TicketSearchPagination struct {
	Limit  int    `json:"limit,omitempty" minimum:"1" maximum:"200" doc:"Items per page (default 50)"`
	Offset int    `json:"offset,omitempty" minimum:"0" maximum:"2147483647" doc:"Items to skip"`
	Page   int    `json:"page,omitempty" minimum:"1" doc:"1-based page number (instead of offset)"`
	Cursor string `json:"cursor,omitempty" maxLength:"200" doc:"Opaque cursor from pagination.next_cursor (wins over page and offset)"`
}

// TicketSearchBody is the body form of a ticket search (POST).
type TicketSearchBody struct {
	Filters    *TicketSearchFilters    `json:"filters,omitempty"`
	Query      string                  `json:"query,omitempty" maxLength:"200" doc:"Keywords: every word must appear, in any case, in the title or the description"`
	Sort       *TicketSearchSort       `json:"sort,omitempty"`
	Pagination *TicketSearchPagination `json:"pagination,omitempty"`
}

func (b *TicketSearchBody) search() support.TicketSearch {
	in := support.TicketSearch{Filter: support.TicketFilter{Query: b.Query}}
	if f := b.Filters; f != nil {
		in.Filter = support.TicketFilter{CustomerID: f.CustomerID, Status: f.Status, Priority: f.Priority, Category: f.Category,
			AssignedTo: f.AssignedTo, CreatedAfter: f.CreatedAfter, Query: b.Query}
	}
	if b.Sort != nil {
		in.Sort, in.Order = b.Sort.Field, b.Sort.Order
	}
	return in
}

// page is the list query of the body's pagination.
func (b *TicketSearchBody) page() models.ListQuery {
	if p := b.Pagination; p != nil {
		return models.ListQuery{Limit: p.Limit, Offset: p.Offset, Page: p.Page, Cursor: p.Cursor}
	}
	return models.ListQuery{}
}

// searchPage parses a search's pagination as every list's (models.ParsePage),
// its fields named with prefix ("pagination." in the body form).
// Errors: VALIDATION_ERROR.
func searchPage(q models.ListQuery, prefix string) (models.PageRequest, error) {
	pr, err := models.ParsePage(q)
	if err == nil || prefix == "" {
		return pr, err
	}
	e := models.AsError(err)
	issues, _ := e.Details["fields"].([]models.FieldIssue)
	for i := range issues {
		issues[i].Field = prefix + issues[i].Field
	}
	return pr, models.Invalid(issues...)
}

// searchWindow returns the tickets of in at pr's offset and limit, and
// their total. The support store pages a search by page number, so an
// offset that is not a multiple of the limit (an offset, or a cursor
// followed with another limit) reads the two pages the window spans.
func (s *Server) searchWindow(ctx context.Context, p *models.Principal, in support.TicketSearch, pr models.PageRequest) ([]support.Ticket, int64, error) {
	in.Limit, in.Page = pr.Limit, pr.Offset/pr.Limit+1
	rows, total, _, err := s.support.SearchTickets(ctx, p, in)
	skip := pr.Offset % pr.Limit
	if err != nil || skip == 0 {
		return rows, total, err
	}
	rows = rows[min(skip, len(rows)):]
	if int64(in.Page)*int64(pr.Limit) >= total {
		return rows, total, nil
	}
	in.Page++
	more, _, _, err := s.support.SearchTickets(ctx, p, in)
	if err != nil {
		return nil, 0, err
	}
	return append(rows, more[:min(skip, len(more))]...), total, nil
}

// registerSupportSearch registers the ticket search, GET and POST (before
// /support/tickets/{ticket_id}, which would otherwise take "search").
func (s *Server) registerSupportSearch(tags []string) {
	search := func(ctx context.Context, in support.TicketSearch, q models.ListQuery, prefix string) (*TicketsOutput, error) {
		pr, err := searchPage(q, prefix)
		if err != nil {
			return nil, err
		}
		p := principal(ctx)
		rows, total, err := s.searchWindow(ctx, p, in, pr)
		if err != nil {
			return nil, err
		}
		return s.ticketsOutput(p, rows, pr, total), nil
	}
	doc := "Searches the caller's organization's tickets (provider staff: every organization's): filters on status and priority lists, " +
		"created_after, category, assigned_to and customer_id; keywords over title and description (every word must appear, in any case); " +
		"one sort field (created_at, updated_at, priority by rank, status in lifecycle order) with its order (default created_at desc); " +
		"limit (per_page), and offset or page, or the cursor of pagination.next_cursor, as every list. Answers like the ticket list."
	register(s, huma.Operation{OperationID: "search-support-tickets", Method: http.MethodGet, Path: "/support/tickets/search", Summary: "Search support tickets",
		Description: doc + " Query form: status=open,escalated&priority=high&q=packet+loss&sort=priority:desc&limit=20&cursor=<next_cursor>.", Tags: tags},
		access{permission: support.PermissionRead}, func(ctx context.Context, in *TicketSearchParams) (*TicketsOutput, error) {
			field, order, _ := strings.Cut(in.Sort, ":")
			if in.Sort != "" && field == "" {
				return nil, models.Invalid(models.FieldIssue{Field: "sort", Issue: "must be field:order, e.g. priority:desc"})
			}
			return search(ctx, support.TicketSearch{Filter: support.TicketFilter{CustomerID: in.CustomerID, Status: splitList(in.Status),
				Priority: splitList(in.Priority), Category: in.Category, AssignedTo: in.AssignedTo, CreatedAfter: in.CreatedAfter, Query: in.Q},
				Sort: field, Order: order}, models.ListQuery{Limit: in.Limit, PerPage: in.PerPage, Offset: in.Offset, Page: in.Page, Cursor: in.Cursor}, "")
		})
	register(s, huma.Operation{OperationID: "search-support-tickets-body", Method: http.MethodPost, Path: "/support/tickets/search", Summary: "Search support tickets (JSON body)",
		Description: doc + " Body form: {filters: {status: [...], priority: [...], created_after, category, assigned_to, customer_id}, query, " +
			"sort: {field, order}, pagination: {limit, offset, page, cursor}}; changes nothing.", Tags: tags},
		access{permission: support.PermissionRead}, func(ctx context.Context, in *struct{ Body TicketSearchBody }) (*TicketsOutput, error) {
			return search(ctx, in.Body.search(), in.Body.page(), "pagination.")
		})
}
