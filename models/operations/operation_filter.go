package operations

import "github.com/telcoplatform/platform/models/filter"

// TypeNames are the types an operation row may have, as the filter= field
// type takes them. Some are declared by the domains that start them
// (services: modification, scaling, decommission; automation:
// orchestration, orchestration_trigger); they are written out here because
// those packages import this one.
func TypeNames() []string {
	return []string{string(OpTypeProvisioning), "modification", "scaling", "decommission",
		string(OpTypeBulkProvision), string(OpTypeBulkModify), string(OpTypeBulkStatus),
		"orchestration", "orchestration_trigger", string(OpTypeSupportReport), string(OpTypeAnalyticsReport)}
}

// StatusNames are the operation statuses, pending first.
func StatusNames() []string {
	return []string{string(OpPending), string(OpInProgress), string(OpCompleted), string(OpPartial),
		string(OpFailed), string(OpRolledBack), string(OpCancelled)}
}

// OperationFilterSchema is the fields the operation list's filter=
// expression may name (docs/filtering.md): resource_id is what the
// operation acts on (a service, an orchestration definition, a report),
// created_by the user or key that started it, and an operation that has not
// ended has a null finished_at.
func OperationFilterSchema() filter.Schema {
	ids := []filter.Op{filter.Eq, filter.Ne, filter.In, filter.NotIn}
	optional := []filter.Op{filter.Eq, filter.Ne, filter.In, filter.NotIn, filter.IsNull, filter.IsNotNull}
	return filter.Schema{
		"type":        {Column: "type", Type: filter.Enum, Values: TypeNames()},
		"status":      {Column: "status", Type: filter.Enum, Values: StatusNames()},
		"resource_id": {Column: "NULLIF(resource_id, '')", Type: filter.String, Nullable: true, Operators: optional},
		"created_by":  {Column: "created_by", Type: filter.String, Operators: ids},
		"created_at":  {Column: "created_at", Type: filter.Time},
		"updated_at":  {Column: "updated_at", Type: filter.Time},
		"finished_at": {Column: "finished_at", Type: filter.Time, Nullable: true},
	}
}
