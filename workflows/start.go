package workflows

import (
	"fmt"
	"strings"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/telcoplatform/platform/models"
)

// Priority is the class of a workflow (spec 8): it chooses the task queue
// the workflow runs on.
type Priority int

const (
	// Interactive workflows (operations a client waits for, billing,
	// webhook deliveries, housekeeping) run on the interactive task queue.
	Interactive Priority = iota
	// Background workflows (bulk jobs) run on the background task queue,
	// whose worker has its own, smaller slot limits.
	Background
)

// TaskQueues are the names of the platform's task queues, as configured.
type TaskQueues struct {
	// Interactive is TEMPORAL_TASK_QUEUE; empty means TaskQueue.
	Interactive string
	// Background is TEMPORAL_BACKGROUND_TASK_QUEUE; empty means
	// BackgroundTaskQueue(the interactive queue).
	Background string
}

// For returns the task queue of the workflows of priority p.
func (q TaskQueues) For(p Priority) string {
	interactive := q.Interactive
	if interactive == "" {
		interactive = TaskQueue
	}
	if p != Background {
		return interactive
	}
	if q.Background != "" {
		return q.Background
	}
	return BackgroundTaskQueue(interactive)
}

// Start is one start of a workflow, what StartOptions turns into options.
type Start struct {
	// ID is the workflow id: the request id of what the workflow runs
	// (the operation, bulk operation, orchestration, subscription,
	// invoice or webhook delivery), so that a request starts its workflow
	// once.
	ID       string
	Priority Priority
	// OrganizationID and Environment are the tenant, OperationType the
	// kind of work and ResourceID what it is about: the custom search
	// attributes operators filter on. A workflow of no tenant (empty
	// OrganizationID) sets OperationType only.
	OrganizationID string
	Environment    models.Environment
	OperationType  string
	ResourceID     string
	// Singleton marks a workflow that any number of callers start under a
	// fixed id (housekeeping): a start joins the run going (conflict
	// policy use-existing) and starts afresh once it has ended. Otherwise
	// a duplicate id is refused, even after the first run ended (reuse
	// policy reject-duplicate), and a start while it runs is an error
	// (serviceerror.WorkflowExecutionAlreadyStarted).
	Singleton bool
	// Replace marks a workflow whose newest start wins (a ticket's
	// automatic close): a start while a run is going terminates that run
	// (conflict policy terminate-existing), and an ended run's id may be
	// used again.
	Replace bool
	// Summary is the one line an operator reads for the workflow in the
	// Temporal UI and CLI (its static summary); empty: one made of the
	// fields above ("Provisioning svc_1 for org_1 (live)").
	Summary string
	// Link is the address of the API resource the workflow works on (an
	// operation's status URL, a ticket), shown in the workflow's details.
	Link string
}

// summary returns st.Summary, or one made of the kind of work, what it is
// about and the tenant.
func (st Start) summary() string {
	if st.Summary != "" {
		return st.Summary
	}
	what := WorkLabel(st.OperationType)
	if st.ResourceID != "" && st.ResourceID != st.ID {
		what += " " + st.ResourceID
	}
	if st.OrganizationID != "" {
		what += fmt.Sprintf(" for %s (%s)", st.OrganizationID, st.Environment)
	}
	return what
}

// WorkLabel names a kind of work (an operation type) for people:
// "bulk_provision" is "Bulk provision"; empty is "Workflow".
func WorkLabel(opType string) string {
	label := strings.ReplaceAll(opType, "_", " ")
	if label == "" {
		return "Workflow"
	}
	return strings.ToUpper(label[:1]) + label[1:]
}

// details returns the workflow's static details (Markdown): what it works
// on, the tenant with the search attributes that find its other
// workflows, and the API resource.
func (st Start) details() string {
	var b strings.Builder
	b.WriteString(fmt.Sprintf("**Work**: `%s`", st.OperationType))
	if st.ResourceID != "" {
		b.WriteString(fmt.Sprintf(" on `%s`", st.ResourceID))
	}
	b.WriteString("\n\n")
	if st.OrganizationID != "" {
		b.WriteString(fmt.Sprintf("**Tenant**: `%s` (%s). Its workflows: `OrganizationId = \"%s\" AND Environment = \"%s\"`\n\n",
			st.OrganizationID, st.Environment, st.OrganizationID, st.Environment))
	}
	if st.Link != "" {
		b.WriteString(fmt.Sprintf("**API**: %s\n", st.Link))
	}
	return strings.TrimRight(b.String(), "\n")
}

// StartOptions returns the options of the start st on queues: the one
// place where the platform's workflow starts get their id, task queue,
// id policies and search attributes (the api, the events dispatcher and
// the worker process all start workflows with it), with the summary and
// details an operator reads in the Temporal UI.
func StartOptions(queues TaskQueues, st Start) client.StartWorkflowOptions {
	opts := client.StartWorkflowOptions{
		ID:                    st.ID,
		TaskQueue:             queues.For(st.Priority),
		TypedSearchAttributes: searchAttributes(st.OrganizationID, st.Environment, st.OperationType, st.ResourceID),
		StaticSummary:         st.summary(),
		StaticDetails:         st.details(),
	}
	if st.Singleton {
		opts.WorkflowIDConflictPolicy = enums.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING
		opts.WorkflowIDReusePolicy = enums.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE
		return opts
	}
	if st.Replace {
		opts.WorkflowIDConflictPolicy = enums.WORKFLOW_ID_CONFLICT_POLICY_TERMINATE_EXISTING
		opts.WorkflowIDReusePolicy = enums.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE
		return opts
	}
	opts.WorkflowIDReusePolicy = enums.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE
	opts.WorkflowExecutionErrorWhenAlreadyStarted = true
	return opts
}

// searchAttributes returns the custom search attributes of a workflow of
// the tenant (organizationID, env) doing opType about resourceID; without
// a tenant, OperationType only.
func searchAttributes(organizationID string, env models.Environment, opType, resourceID string) temporal.SearchAttributes {
	if organizationID == "" {
		return temporal.NewSearchAttributes(OperationTypeKey.ValueSet(opType))
	}
	return temporal.NewSearchAttributes(
		OrganizationIDKey.ValueSet(organizationID),
		EnvironmentKey.ValueSet(string(env)),
		OperationTypeKey.ValueSet(opType),
		ResourceIDKey.ValueSet(resourceID),
	)
}
