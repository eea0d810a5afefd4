// Package workflows holds the platform's Temporal workflows: deterministic
// orchestration only (ordering, timers, retries, compensation, signals,
// queries). Workflows never touch the database or the network; activities do.
package workflows

import (
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
)

// TaskQueue is the default task queue of the platform's worker
// (configurable through TEMPORAL_TASK_QUEUE).
const TaskQueue = "platform"

// Custom search attributes set by the platform's workflows, so operators can
// filter in the Temporal UI (e.g. `OrganizationId = "org_..."`).
var (
	OrganizationIDKey = temporal.NewSearchAttributeKeyKeyword("OrganizationId")
	EnvironmentKey    = temporal.NewSearchAttributeKeyKeyword("Environment")
	OperationTypeKey  = temporal.NewSearchAttributeKeyKeyword("OperationType")
	ResourceIDKey     = temporal.NewSearchAttributeKeyKeyword("ResourceId")
)

// SearchAttribute is one custom search attribute and its type.
type SearchAttribute struct {
	Name string
	Type enums.IndexedValueType
}

// SearchAttributes lists every custom search attribute, for registration on
// a Temporal server (`make run` and tests pass them to the dev server).
func SearchAttributes() []SearchAttribute {
	return []SearchAttribute{
		{OrganizationIDKey.GetName(), enums.INDEXED_VALUE_TYPE_KEYWORD},
		{EnvironmentKey.GetName(), enums.INDEXED_VALUE_TYPE_KEYWORD},
		{OperationTypeKey.GetName(), enums.INDEXED_VALUE_TYPE_KEYWORD},
		{ResourceIDKey.GetName(), enums.INDEXED_VALUE_TYPE_KEYWORD},
		{TicketStatusKey.GetName(), enums.INDEXED_VALUE_TYPE_KEYWORD},
		{TicketPriorityKey.GetName(), enums.INDEXED_VALUE_TYPE_KEYWORD},
		{SlaNextBreachAtKey.GetName(), enums.INDEXED_VALUE_TYPE_DATETIME},
	}
}

// DevServerArgs returns the `--search-attribute Name=Type` arguments of the
// Temporal CLI dev server for SearchAttributes.
func DevServerArgs() []string {
	var args []string
	for _, sa := range SearchAttributes() {
		typ := "Keyword"
		if sa.Type == enums.INDEXED_VALUE_TYPE_DATETIME {
			typ = "Datetime"
		}
		args = append(args, "--search-attribute", sa.Name+"="+typ)
	}
	return args
}
