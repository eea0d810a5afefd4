package api

import "github.com/telcoplatform/platform/models"

// ListParams are the query parameters every list accepts (DECISIONS 2).
type ListParams struct {
	Limit   int    `query:"limit" minimum:"1" maximum:"200" doc:"Items per page (1-200, default 50)"`
	PerPage int    `query:"per_page" minimum:"1" maximum:"200" doc:"Alias of limit"`
	Offset  int    `query:"offset" minimum:"0" doc:"Items to skip"`
	Page    int    `query:"page" minimum:"1" doc:"1-based page number (instead of offset)"`
	Cursor  string `query:"cursor" maxLength:"200" doc:"Opaque cursor from pagination.next_cursor"`
	Sort    string `query:"sort" maxLength:"200" doc:"Comma-separated field:asc|desc" example:"created_at:desc"`
}

// page parses the list parameters. Errors: VALIDATION_ERROR.
func (p ListParams) page() (models.PageRequest, error) {
	return models.ParsePage(models.ListQuery{Limit: p.Limit, PerPage: p.PerPage, Offset: p.Offset, Page: p.Page, Cursor: p.Cursor, Sort: p.Sort})
}

// Pagination describes a page of a list.
type Pagination struct {
	Page       int    `json:"page"`
	PerPage    int    `json:"per_page"`
	Total      int64  `json:"total"`
	Pages      int    `json:"pages"`
	NextCursor string `json:"next_cursor,omitempty"`
}

func newPagination(pr models.PageRequest, total int64) Pagination {
	return Pagination{Page: pr.PageNumber(), PerPage: pr.Limit, Total: total, Pages: pr.Pages(total), NextCursor: pr.NextCursor(total)}
}

// mapSlice converts a slice of models into answer items.
func mapSlice[T, U any](in []T, f func(*T) U) []U {
	out := make([]U, len(in))
	for i := range in {
		out[i] = f(&in[i])
	}
	return out
}
