package api

import "github.com/telcoplatform/platform/models"

// ListParams are the query parameters every list accepts (DECISIONS 2).
type ListParams struct {
	Limit   int    `query:"limit" minimum:"1" maximum:"200" doc:"Items per page (1-200, default 50)"`
	PerPage int    `query:"per_page" minimum:"1" maximum:"200" doc:"Alias of limit"`
	Offset  int    `query:"offset" minimum:"0" maximum:"2147483647" doc:"Items to skip"`
	Page    int    `query:"page" minimum:"1" doc:"1-based page number (instead of offset)"`
	Cursor  string `query:"cursor" maxLength:"200" doc:"Opaque cursor from pagination.next_cursor: the next page of the list as it was at the first page (items created since are left out; docs/api.md, Cursors)"`
	Sort    string `query:"sort" maxLength:"200" doc:"Comma-separated field:asc|desc" example:"created_at:desc"`
}

// page parses the list parameters. Errors: VALIDATION_ERROR.
func (p ListParams) page() (models.PageRequest, error) {
	return models.ParsePage(models.ListQuery{Limit: p.Limit, PerPage: p.PerPage, Offset: p.Offset, Page: p.Page, Cursor: p.Cursor, Sort: p.Sort})
}

// Pagination describes a page of a list. Every field is always sent:
// next_cursor is null on the last page. Build it with newPagination (or
// pageOf), never field by field.
type Pagination struct {
	Page       int     `json:"page" doc:"1-based number of this page"`
	PerPage    int     `json:"per_page" doc:"Items per page (the limit)"`
	Total      int64   `json:"total" doc:"Items in the whole list (on a page read by cursor: as at the first page)"`
	Pages      int     `json:"pages" doc:"Number of pages"`
	NextCursor *string `json:"next_cursor" nullable:"true" doc:"Cursor of the next page (pass as cursor), which leaves out the items created since the first page; null on the last page"`
}

// newPagination describes the page pr of a list of total items. Its
// next_cursor keeps the snapshot the list was read in (models.Paginate),
// so call it after reading the page.
func newPagination(pr models.PageRequest, total int64) Pagination {
	pg := Pagination{Page: pr.PageNumber(), PerPage: pr.Limit, Total: total, Pages: pr.Pages(total)}
	if next := pr.NextCursor(total); next != "" {
		pg.NextCursor = &next
	}
	return pg
}

// pageOf cuts the page pr out of a list held in memory and describes it.
func pageOf[T any](all []T, pr models.PageRequest) ([]T, Pagination) {
	return all[min(pr.Offset, len(all)):min(pr.Offset+pr.Limit, len(all))], newPagination(pr, int64(len(all)))
}

// mapSlice converts a slice of models into answer items.
func mapSlice[T, U any](in []T, f func(*T) U) []U {
	out := make([]U, len(in))
	for i := range in {
		out[i] = f(&in[i])
	}
	return out
}
