package eventlog

import "github.com/telcoplatform/platform/models/filter"

// EventFilterSchema is the fields the event list's filter= expression may
// name (docs/filtering.md): type is the canonical event name (type ~
// "service." finds the service events), resource_id the resource it is
// about.
func EventFilterSchema() filter.Schema {
	return filter.Schema{
		"type":        {Column: "type", Type: filter.String},
		"resource_id": {Column: "resource_id", Type: filter.String, Operators: []filter.Op{filter.Eq, filter.Ne, filter.In, filter.NotIn}},
		"created_at":  {Column: "created_at", Type: filter.Time},
	}
}
