package support

import "github.com/telcoplatform/platform/models/filter"

// TicketFilterSchema is the fields the ticket list's filter= expression
// may name (docs/filtering.md): priority compares by rank (low < medium <
// high < critical), title takes ~ (contains), and an unassigned ticket or
// one without a subcategory reads as null.
func TicketFilterSchema() filter.Schema {
	text := []filter.Op{filter.Eq, filter.Ne, filter.In, filter.NotIn}
	optional := []filter.Op{filter.Eq, filter.Ne, filter.In, filter.NotIn, filter.IsNull, filter.IsNotNull}
	return filter.Schema{
		"status":           {Column: "status", Type: filter.Enum, Values: Statuses()},
		"priority":         {Column: "priority", Type: filter.Enum, Values: Priorities(), Ordered: true},
		"category":         {Column: "category", Type: filter.String, Operators: text},
		"subcategory":      {Column: "NULLIF(subcategory, '')", Type: filter.String, Nullable: true, Operators: optional},
		"customer_id":      {Column: "customer_id", Type: filter.String, Operators: text},
		"assigned_to":      {Column: "NULLIF(assigned_to, '')", Type: filter.String, Nullable: true, Operators: optional},
		"created_at":       {Column: "created_at", Type: filter.Time},
		"updated_at":       {Column: "updated_at", Type: filter.Time},
		"resolved_at":      {Column: "resolved_at", Type: filter.Time, Nullable: true},
		"escalation_level": {Column: "escalation_level", Type: filter.Int},
		"title":            {Column: "title", Type: filter.String},
	}
}
