package workflows

import (
	"context"
	"reflect"
	"runtime"
	"strings"

	"go.temporal.io/sdk/workflow"

	"github.com/telcoplatform/platform/models/identity"
	"github.com/telcoplatform/platform/models/support"
)

// The activities the workflows call, one interface per group, implemented
// by the structs of package activities (worker.RegisterActivities checks
// that at compile time). A workflow names an activity by a method
// expression of its interface, never by a string:
//
//	execute(ctx, ProvisioningActivities.Validate, in)
//
// so a mistyped name, or an argument of the wrong type, does not compile.
// The activity's type name (the name recorded in workflow histories) is
// the interface's name without "Activities", a dot and the method:
// "Provisioning.Validate" (ActivityName). The worker registers each struct
// with that prefix (ActivityPrefix), so the registered names are the ones
// the workflows schedule.

// ProvisioningActivities are the activities of the Provisioning workflow
// (activities.Provisioning), named "Provisioning.<Method>".
type ProvisioningActivities interface {
	Begin(ctx context.Context, in ProvisioningInput) error
	MarkStep(ctx context.Context, in StepInput) error
	Validate(ctx context.Context, in ProvisioningInput) error
	ReserveCapacity(ctx context.Context, in ProvisioningInput) error
	Configure(ctx context.Context, in ProvisioningInput) error
	Activate(ctx context.Context, in ProvisioningInput) error
	RecordService(ctx context.Context, in ProvisioningInput) (*ProvisioningResult, error)
	ReleaseCapacity(ctx context.Context, in ProvisioningInput) error
	ReleaseNetwork(ctx context.Context, in ProvisioningInput) error
	Deactivate(ctx context.Context, in ProvisioningInput) error
	Finish(ctx context.Context, in FinishInput) error
}

// ServiceChangeActivities are the activities of the ServiceChange workflow
// (activities.ServiceChange), named "ServiceChange.<Method>".
type ServiceChangeActivities interface {
	Begin(ctx context.Context, in ServiceChangeInput) error
	MarkStep(ctx context.Context, in ChangeStepInput) error
	StartMaintenance(ctx context.Context, in ServiceChangeInput) error
	Validate(ctx context.Context, in ServiceChangeInput) error
	ReserveCapacity(ctx context.Context, in ServiceChangeInput) error
	Apply(ctx context.Context, in ServiceChangeInput) error
	EndMaintenance(ctx context.Context, in ServiceChangeInput) error
	ReleaseCapacity(ctx context.Context, in ServiceChangeInput) error
	Finish(ctx context.Context, in ChangeFinishInput) error
}

// DecommissionActivities are the activities of the Decommission workflow
// (activities.Decommission), named "Decommission.<Method>".
type DecommissionActivities interface {
	Begin(ctx context.Context, in DecommissionInput) error
	MarkStep(ctx context.Context, in DecomStepInput) error
	Validate(ctx context.Context, in DecommissionInput) error
	MigrateData(ctx context.Context, in DecommissionInput) error
	VerifyMigration(ctx context.Context, in DecommissionInput) error
	RollbackMigration(ctx context.Context, in DecommissionInput) error
	Deactivate(ctx context.Context, in DecommissionInput) error
	ReleaseInventory(ctx context.Context, in DecommissionInput) error
	StopBilling(ctx context.Context, in DecommissionInput) error
	Record(ctx context.Context, in DecommissionInput) (*DecommissionResult, error)
	Finish(ctx context.Context, in DecomFinishInput) error
}

// WebhooksActivities are the activities of the WebhookDelivery workflow
// (activities.Webhooks), named "Webhooks.<Method>".
type WebhooksActivities interface {
	Prepare(ctx context.Context, in WebhookDeliveryInput) (*WebhookPrepareResult, error)
	Attempt(ctx context.Context, in WebhookAttemptInput) (*WebhookAttemptResult, error)
	Finish(ctx context.Context, in WebhookFinishInput) error
}

// BillingActivities are the activities of the Subscription and InvoiceDue
// workflows (activities.Billing), named "Billing.<Method>".
type BillingActivities interface {
	BeginSubscription(ctx context.Context, in SubscriptionInput) (*SubscriptionState, error)
	ClosePeriod(ctx context.Context, in ClosePeriodInput) (*ClosePeriodResult, error)
	AutoPay(ctx context.Context, in InvoiceActionInput) (*AutoPayOutcome, error)
	MarkOverdue(ctx context.Context, in InvoiceActionInput) error
}

// BulkActivities are the activities of the Bulk workflow (activities.Bulk),
// named "Bulk.<Method>". PrepareChange and PrepareRevert prepare the
// ServiceChange child workflow of a modification item (and of its
// rollback). ProvisionBatch provisions a chunk of bulk provisioning items
// in-process (the Provisioning workflow's steps and compensations per
// item) and returns each item's outcome.
type BulkActivities interface {
	Begin(ctx context.Context, ref BulkRef) error
	Load(ctx context.Context, in BulkLoadInput) (*BulkPage, error)
	Record(ctx context.Context, in BulkRecordInput) error
	Apply(ctx context.Context, in BulkItemInput) error
	PrepareChange(ctx context.Context, in BulkItemInput) (*ChangeStart, error)
	PrepareRevert(ctx context.Context, in BulkItemInput) (*ChangeStart, error)
	Rollback(ctx context.Context, in BulkItemInput) error
	Finish(ctx context.Context, in BulkFinishInput) (*BulkResult, error)
	ProvisionBatch(ctx context.Context, in BulkBatchInput) (*BulkBatchResult, error)
}

// OrchestrationActivities are the activities of the Orchestration and
// OrchestrationTrigger workflows (activities.Orchestration), named
// "Orchestration.<Method>". DispatchEvent hands an outbox event to the
// event triggers of its organization that wait for it (for the events
// dispatcher).
type OrchestrationActivities interface {
	Begin(ctx context.Context, ref OrchestrationRef) error
	MarkStep(ctx context.Context, in OrchestrationMarkInput) error
	PrepareProvision(ctx context.Context, in OrchestrationStepInput) (*ProvisioningInput, error)
	ChangeService(ctx context.Context, in OrchestrationStepInput) (map[string]any, error)
	PrepareChange(ctx context.Context, in OrchestrationStepInput) (*ChangeStart, error)
	CheckAvailability(ctx context.Context, in OrchestrationStepInput) (map[string]any, error)
	Notify(ctx context.Context, in OrchestrationStepInput) (map[string]any, error)
	Finish(ctx context.Context, in OrchestrationFinishInput) error
	PrepareRun(ctx context.Context, in PrepareRunInput) (*OrchestrationInput, error)
	FinishTrigger(ctx context.Context, ref OrchestrationRef) error
	DispatchEvent(ctx context.Context, in OrchestrationEventInput) (int, error)
}

// HousekeepingActivities are the activities of the Housekeeping workflow
// (activities.Housekeeping), named "Housekeeping.<Method>".
type HousekeepingActivities interface {
	Purge(ctx context.Context, in HousekeepingPurgeInput) (identity.PurgeCounts, error)
}

// SupportActivities are the activities of the TicketAutoClose, TicketSLA
// and SLARetime workflows (activities.SupportTickets), named "Support.<Method>".
type SupportActivities interface {
	CloseIfQuiet(ctx context.Context, in support.AutoClose) (bool, error)
	SyncSLA(ctx context.Context, in SLASyncInput) (*support.SLAState, error)
	RetimeCandidates(ctx context.Context, in SLARetimePage) ([]string, error)
}

// ActivityInterfaces returns the type of every activity interface: the
// list of activity groups (the worker's registration test checks that
// each is registered).
func ActivityInterfaces() []reflect.Type {
	return []reflect.Type{
		reflect.TypeFor[ProvisioningActivities](),
		reflect.TypeFor[ServiceChangeActivities](),
		reflect.TypeFor[DecommissionActivities](),
		reflect.TypeFor[WebhooksActivities](),
		reflect.TypeFor[BillingActivities](),
		reflect.TypeFor[BulkActivities](),
		reflect.TypeFor[OrchestrationActivities](),
		reflect.TypeFor[HousekeepingActivities](),
		reflect.TypeFor[SupportActivities](),
		reflect.TypeFor[TrackerActivities](),
		reflect.TypeFor[ReportsActivities](),
		reflect.TypeFor[AnalyticsReportsActivities](),
	}
}

// activitiesSuffix ends the name of every activity interface.
const activitiesSuffix = "Activities"

// GroupPrefix returns the prefix of the type names of the activities of
// the interface type t: its name without "Activities", and a dot
// ("Provisioning." for ProvisioningActivities).
func GroupPrefix(t reflect.Type) string {
	return strings.TrimSuffix(t.Name(), activitiesSuffix) + "."
}

// ActivityPrefix returns the prefix of the type names of the activities of
// I, one of the activity interfaces: GroupPrefix of its type. The worker
// registers the struct implementing I with it.
func ActivityPrefix[I any]() string {
	return GroupPrefix(reflect.TypeFor[I]())
}

// ActivityName returns the type name of the activity m, a method
// expression of one of the activity interfaces:
// ActivityName(ProvisioningActivities.Validate) is "Provisioning.Validate".
// It panics when m is not such a method expression (a programming error
// that every workflow test would show).
func ActivityName(m any) string {
	// The function of the method expression I.M is named
	// "<package path>.I.M" (the name is fixed at compile time).
	full := runtime.FuncForPC(reflect.ValueOf(m).Pointer()).Name()
	i := strings.LastIndex(full, "/")
	parts := strings.Split(full[i+1:], ".")
	if len(parts) != 3 || !strings.HasSuffix(parts[1], activitiesSuffix) {
		panic("workflows: not a method expression of an activity interface: " + full)
	}
	return strings.TrimSuffix(parts[1], activitiesSuffix) + "." + parts[2]
}

// summarized returns ctx with summary as the summary of the activities it
// schedules (what the Temporal UI shows an operator for each activity),
// its other activity options unchanged. ctx must carry activity options.
// A summary is no part of what replay compares: changing its text leaves
// histories valid.
func summarized(ctx workflow.Context, summary string) workflow.Context {
	o := workflow.GetActivityOptions(ctx)
	o.Summary = summary
	return workflow.WithActivityOptions(ctx, o)
}

// summarizedLocal is summarized for the local activities ctx runs (ctx must
// carry local activity options).
func summarizedLocal(ctx workflow.Context, summary string) workflow.Context {
	o := workflow.GetLocalActivityOptions(ctx)
	o.Summary = summary
	return workflow.WithLocalActivityOptions(ctx, o)
}

// execute schedules the activity m (a method expression of an activity
// interface, with no result) with the argument in, on ctx's activity
// options.
func execute[I, In any](ctx workflow.Context, m func(I, context.Context, In) error, in In) workflow.Future {
	return workflow.ExecuteActivity(ctx, ActivityName(m), in)
}

// call schedules the activity m (a method expression of an activity
// interface, with a result) with the argument in, on ctx's activity
// options; the future's value is the result.
func call[I, In, Out any](ctx workflow.Context, m func(I, context.Context, In) (Out, error), in In) workflow.Future {
	return workflow.ExecuteActivity(ctx, ActivityName(m), in)
}

// callLocal runs the activity m (as call) as a local activity, on ctx's
// local activity options: in the worker that runs the workflow task, with
// no activity task on the server (the worker must have m registered, as
// it has every activity).
func callLocal[I, In, Out any](ctx workflow.Context, m func(I, context.Context, In) (Out, error), in In) workflow.Future {
	return workflow.ExecuteLocalActivity(ctx, ActivityName(m), in)
}
