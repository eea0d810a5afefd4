// Package worker is the single place that lists the platform's workflows and
// activities and registers them on a Temporal worker.
package worker

import (
	"log/slog"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/telcoplatform/platform/activities"
	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/payments"
	"github.com/telcoplatform/platform/simulator"
	"github.com/telcoplatform/platform/webhooks"
	"github.com/telcoplatform/platform/workflows"
)

// Deps are what the activities need, passed in by main.
type Deps struct {
	Store  *models.Store
	Logger *slog.Logger
	// Southbound is the network; nil means the simulator over Store with
	// SimulatorStepDelay per step.
	Southbound         simulator.Southbound
	SimulatorStepDelay time.Duration // SIMULATOR_STEP_DELAY
	// Temporal is the client activities use to signal workflows (the event
	// triggers of orchestrations); New and NewBackground set it to theirs.
	Temporal client.Client
	// Webhooks sends webhook deliveries; nil means a client that refuses
	// private addresses (webhooks.NewClient(false)).
	Webhooks *webhooks.Client
	// Payments charges cards for auto-pay; nil means the simulator (payments.NewSimulator).
	Payments payments.Gateway
	// APIUsage reads the organizations' monthly API requests for overage
	// billing (a *ratelimit.Limiter); nil means API overage is not billed.
	APIUsage activities.APIUsage
	// StopTimeout is how long Stop waits for running activities before it
	// cancels them (SHUTDOWN_TIMEOUT); zero means it does not wait. An
	// activity stopped this way is retried by another worker once its
	// heartbeat times out (workflows.StepHeartbeatTimeout).
	StopTimeout time.Duration
}

// WorkflowRegistry is where workflows are registered: a worker, or a
// workflow replayer (which runs no activity).
type WorkflowRegistry interface {
	RegisterWorkflowWithOptions(w any, options workflow.RegisterOptions)
}

// RegisterWorkflows registers every workflow of the platform under its
// name: the one list shared by workers and the replay tests.
func RegisterWorkflows(w WorkflowRegistry) {
	w.RegisterWorkflowWithOptions(workflows.Provisioning, workflow.RegisterOptions{Name: workflows.ProvisioningWorkflow})
	w.RegisterWorkflowWithOptions(workflows.ServiceChange, workflow.RegisterOptions{Name: workflows.ServiceChangeWorkflow})
	w.RegisterWorkflowWithOptions(workflows.Decommission, workflow.RegisterOptions{Name: workflows.DecommissionWorkflow})
	w.RegisterWorkflowWithOptions(workflows.WebhookDelivery, workflow.RegisterOptions{Name: workflows.WebhookDeliveryWorkflow})
	w.RegisterWorkflowWithOptions(workflows.Subscription, workflow.RegisterOptions{Name: workflows.SubscriptionWorkflow})
	w.RegisterWorkflowWithOptions(workflows.InvoiceDue, workflow.RegisterOptions{Name: workflows.InvoiceDueWorkflow})
	w.RegisterWorkflowWithOptions(workflows.Housekeeping, workflow.RegisterOptions{Name: workflows.HousekeepingWorkflow})
	w.RegisterWorkflowWithOptions(workflows.Bulk, workflow.RegisterOptions{Name: workflows.BulkWorkflow})
	w.RegisterWorkflowWithOptions(workflows.Orchestration, workflow.RegisterOptions{Name: workflows.OrchestrationWorkflow})
	w.RegisterWorkflowWithOptions(workflows.OrchestrationTrigger, workflow.RegisterOptions{Name: workflows.OrchestrationTriggerWorkflow})
}

// Register registers every workflow and activity of the platform on w.
func Register(w sdkworker.Registry, deps Deps) {
	RegisterWorkflows(w)
	net := deps.Southbound
	if net == nil {
		net = simulator.New(deps.Store, simulator.Options{StepDelay: deps.SimulatorStepDelay, Logger: deps.Logger})
	}

	prov := activities.NewProvisioning(deps.Store, net, deps.Logger)
	for name, fn := range map[string]any{
		workflows.ActivityBegin:           prov.Begin,
		workflows.ActivityMarkStep:        prov.MarkStep,
		workflows.ActivityValidate:        prov.Validate,
		workflows.ActivityReserveCapacity: prov.ReserveCapacity,
		workflows.ActivityConfigure:       prov.Configure,
		workflows.ActivityActivate:        prov.Activate,
		workflows.ActivityRecordService:   prov.RecordService,
		workflows.ActivityReleaseCapacity: prov.ReleaseCapacity,
		workflows.ActivityReleaseNetwork:  prov.ReleaseNetwork,
		workflows.ActivityDeactivate:      prov.Deactivate,
		workflows.ActivityFinish:          prov.Finish,
	} {
		w.RegisterActivityWithOptions(fn, activity.RegisterOptions{Name: name})
	}

	svcs := activities.NewServices(deps.Store, net, deps.Logger)
	for name, fn := range map[string]any{
		workflows.ActivityChangeBegin:            svcs.ChangeBegin,
		workflows.ActivityChangeMarkStep:         svcs.ChangeMarkStep,
		workflows.ActivityChangeStartMaintenance: svcs.ChangeStartMaintenance,
		workflows.ActivityChangeValidate:         svcs.ChangeValidate,
		workflows.ActivityChangeReserveCapacity:  svcs.ChangeReserveCapacity,
		workflows.ActivityChangeApply:            svcs.ChangeApply,
		workflows.ActivityChangeEndMaintenance:   svcs.ChangeEndMaintenance,
		workflows.ActivityChangeReleaseCapacity:  svcs.ChangeReleaseCapacity,
		workflows.ActivityChangeFinish:           svcs.ChangeFinish,
		workflows.ActivityDecomBegin:             svcs.DecomBegin,
		workflows.ActivityDecomMarkStep:          svcs.DecomMarkStep,
		workflows.ActivityDecomValidate:          svcs.DecomValidate,
		workflows.ActivityDecomMigrateData:       svcs.DecomMigrateData,
		workflows.ActivityDecomVerifyMigration:   svcs.DecomVerifyMigration,
		workflows.ActivityDecomRollbackMigration: svcs.DecomRollbackMigration,
		workflows.ActivityDecomDeactivate:        svcs.DecomDeactivate,
		workflows.ActivityDecomReleaseInventory:  svcs.DecomReleaseInventory,
		workflows.ActivityDecomStopBilling:       svcs.DecomStopBilling,
		workflows.ActivityDecomRecord:            svcs.DecomRecord,
		workflows.ActivityDecomFinish:            svcs.DecomFinish,
	} {
		w.RegisterActivityWithOptions(fn, activity.RegisterOptions{Name: name})
	}

	whClient := deps.Webhooks
	if whClient == nil {
		whClient = webhooks.NewClient(false)
	}
	wh := activities.NewWebhooks(deps.Store, whClient, deps.Logger)
	w.RegisterActivityWithOptions(wh.Prepare, activity.RegisterOptions{Name: workflows.ActivityWebhookPrepare})
	w.RegisterActivityWithOptions(wh.Attempt, activity.RegisterOptions{Name: workflows.ActivityWebhookAttempt})
	w.RegisterActivityWithOptions(wh.Finish, activity.RegisterOptions{Name: workflows.ActivityWebhookFinish})

	bill := activities.NewBilling(deps.Store, deps.Payments, deps.APIUsage, deps.Logger)
	w.RegisterActivityWithOptions(bill.BeginSubscription, activity.RegisterOptions{Name: workflows.ActivityBeginSubscription})
	w.RegisterActivityWithOptions(bill.ClosePeriod, activity.RegisterOptions{Name: workflows.ActivityClosePeriod})
	w.RegisterActivityWithOptions(bill.AutoPay, activity.RegisterOptions{Name: workflows.ActivityAutoPay})
	w.RegisterActivityWithOptions(bill.MarkOverdue, activity.RegisterOptions{Name: workflows.ActivityMarkOverdue})
	registerBulkAndOrchestration(w, deps, net)

	w.RegisterActivityWithOptions(activities.NewHousekeeping(deps.Store, deps.Logger).Purge, activity.RegisterOptions{Name: workflows.ActivityHousekeepingPurge})
	activities.NewSupportTickets(deps.Store).Register(w) // TicketAutoClose and its activity
}

// registerBulkAndOrchestration registers the bulk and orchestration
// workflows and activities (docs/bulk-and-orchestration.md).
func registerBulkAndOrchestration(w sdkworker.Registry, deps Deps, net simulator.Southbound) {
	bulk := activities.NewBulk(deps.Store, net, deps.Logger)
	for name, fn := range map[string]any{
		workflows.ActivityBulkBegin:         bulk.Begin,
		workflows.ActivityBulkLoad:          bulk.Load,
		workflows.ActivityBulkRecord:        bulk.Record,
		workflows.ActivityBulkApply:         bulk.Apply,
		workflows.ActivityBulkPrepareChange: bulk.PrepareChange,
		workflows.ActivityBulkPrepareRevert: bulk.PrepareRevert,
		workflows.ActivityBulkRollback:      bulk.Rollback,
		workflows.ActivityBulkFinish:        bulk.Finish,
	} {
		w.RegisterActivityWithOptions(fn, activity.RegisterOptions{Name: name})
	}
	orch := activities.NewOrchestration(deps.Store, net, deps.Temporal, deps.Logger)
	for name, fn := range map[string]any{
		workflows.ActivityOrchestrationBegin:            orch.Begin,
		workflows.ActivityOrchestrationMarkStep:         orch.MarkStep,
		workflows.ActivityOrchestrationPrepareProvision: orch.PrepareProvision,
		workflows.ActivityOrchestrationChangeService:    orch.ChangeService,
		workflows.ActivityOrchestrationPrepareChange:    orch.PrepareChange,
		workflows.ActivityOrchestrationAvailability:     orch.CheckAvailability,
		workflows.ActivityOrchestrationNotify:           orch.Notify,
		workflows.ActivityOrchestrationFinish:           orch.Finish,
		workflows.ActivityOrchestrationPrepareRun:       orch.PrepareRun,
		workflows.ActivityOrchestrationFinishTrigger:    orch.FinishTrigger,
		workflows.ActivityOrchestrationDispatchEvent:    orch.DispatchEvent,
	} {
		w.RegisterActivityWithOptions(fn, activity.RegisterOptions{Name: name})
	}
}

// Slot limits of the background task queue (spec 8: bulk jobs and reports
// are background priority). The background worker has its own slots, so a
// bulk job queues behind them instead of taking the interactive worker's.
const (
	BackgroundActivitySlots     = 32
	BackgroundWorkflowTaskSlots = 16
)

// BackgroundOptions returns the options of the background worker: its own,
// smaller slot limits.
func BackgroundOptions() sdkworker.Options {
	return sdkworker.Options{
		MaxConcurrentActivityExecutionSize:      BackgroundActivitySlots,
		MaxConcurrentLocalActivityExecutionSize: BackgroundActivitySlots,
		MaxConcurrentWorkflowTaskExecutionSize:  BackgroundWorkflowTaskSlots,
	}
}

// Options returns the options of the interactive worker: the default slot
// limits and the stop timeout of deps.
func Options(deps Deps) sdkworker.Options {
	return sdkworker.Options{WorkerStopTimeout: deps.StopTimeout}
}

// NewBackground returns a worker polling the background task queue (bulk
// jobs: workflows.BackgroundTaskQueue) with everything registered and the
// slot limits of BackgroundOptions and the stop timeout of deps.
func NewBackground(c client.Client, taskQueue string, deps Deps) sdkworker.Worker {
	if deps.Temporal == nil {
		deps.Temporal = c
	}
	opts := BackgroundOptions()
	opts.WorkerStopTimeout = deps.StopTimeout
	w := sdkworker.New(c, taskQueue, opts)
	Register(w, deps)
	return w
}

// New returns a worker polling taskQueue with everything registered and the
// options of Options(deps).
func New(c client.Client, taskQueue string, deps Deps) sdkworker.Worker {
	if deps.Temporal == nil {
		deps.Temporal = c
	}
	w := sdkworker.New(c, taskQueue, Options(deps))
	Register(w, deps)
	return w
}
