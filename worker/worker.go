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
	"gocloud.dev/blob"

	"github.com/telcoplatform/platform/activities"
	"github.com/telcoplatform/platform/metrics"
	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/payments"
	"github.com/telcoplatform/platform/simulator"
	"github.com/telcoplatform/platform/tracker"
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
	// PublicBaseURL is the API's public base URL (PUBLIC_BASE_URL), under
	// which support chat messages link tickets.
	PublicBaseURL string
	// Blobs is the blob store support reports are written to (BLOB_URL);
	// nil fails report runs with DEPENDENCY_UNAVAILABLE.
	Blobs *blob.Bucket
	// ReportLinkTTL is how long a report's download link works
	// (REPORT_LINK_TTL); zero means support.DefaultReportLinkTTL.
	ReportLinkTTL time.Duration
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
	// Metrics counts what the activities record (webhook delivery
	// attempts, SLA breaches and escalations); nil counts nothing.
	Metrics *metrics.Metrics
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
	w.RegisterWorkflowWithOptions(workflows.TicketAutoClose, workflow.RegisterOptions{Name: workflows.TicketAutoCloseWorkflow})
	w.RegisterWorkflowWithOptions(workflows.TicketSLA, workflow.RegisterOptions{Name: workflows.TicketSLAWorkflow})
	w.RegisterWorkflowWithOptions(workflows.SLARetime, workflow.RegisterOptions{Name: workflows.SLARetimeWorkflow})
	w.RegisterWorkflowWithOptions(workflows.TrackerSync, workflow.RegisterOptions{Name: workflows.TrackerSyncWorkflow})
	w.RegisterWorkflowWithOptions(workflows.SupportReport, workflow.RegisterOptions{Name: workflows.SupportReportWorkflow})
	w.RegisterWorkflowWithOptions(workflows.AnalyticsReport, workflow.RegisterOptions{Name: workflows.AnalyticsReportWorkflow})
	w.RegisterWorkflowWithOptions(workflows.ScheduledAnalyticsReport, workflow.RegisterOptions{Name: workflows.ScheduledAnalyticsReportWorkflow})
}

// ActivityRegistry is where activities are registered: a worker, or a
// test workflow environment.
type ActivityRegistry interface {
	RegisterActivityWithOptions(a any, options activity.RegisterOptions)
}

// Registry is where both workflows and activities are registered.
type Registry interface {
	WorkflowRegistry
	ActivityRegistry
}

// Register registers every workflow and activity of the platform on w.
func Register(w Registry, deps Deps) {
	RegisterWorkflows(w)
	RegisterActivities(w, deps)
}

// RegisterActivities registers every activity of the platform, built over
// deps: the one list of activities, shared by workers and tests. Each
// struct is registered whole under the prefix of the workflows interface
// it implements (workflows.ActivityPrefix: "Provisioning." for
// workflows.ProvisioningActivities), so its activities are named
// "<Group>.<Method>", the names the workflows schedule
// (workflows.ActivityName). registerGroup's type parameter makes the
// compiler check that the struct implements the interface.
func RegisterActivities(w ActivityRegistry, deps Deps) {
	net := deps.Southbound
	if net == nil {
		net = simulator.New(deps.Store, simulator.Options{StepDelay: deps.SimulatorStepDelay, Logger: deps.Logger})
	}
	whClient := deps.Webhooks
	if whClient == nil {
		whClient = webhooks.NewClient(false)
	}
	svcs := activities.NewServices(deps.Store, net, deps.Temporal, deps.Logger)

	registerGroup[workflows.ProvisioningActivities](w, activities.NewProvisioning(deps.Store, net, deps.Logger))
	registerGroup[workflows.ServiceChangeActivities](w, activities.NewServiceChange(svcs))
	registerGroup[workflows.DecommissionActivities](w, activities.NewDecommission(svcs))
	registerGroup[workflows.WebhooksActivities](w, activities.NewWebhooks(deps.Store, whClient, deps.Logger, activities.WithPublicBaseURL(deps.PublicBaseURL), activities.WithWebhookMetrics(deps.Metrics)))
	registerGroup[workflows.BillingActivities](w, activities.NewBilling(deps.Store, deps.Payments, deps.APIUsage, deps.Logger))
	registerGroup[workflows.BulkActivities](w, activities.NewBulk(deps.Store, net, deps.Logger))
	registerGroup[workflows.OrchestrationActivities](w, activities.NewOrchestration(deps.Store, net, deps.Temporal, deps.Logger))
	registerGroup[workflows.HousekeepingActivities](w, activities.NewHousekeeping(deps.Store, deps.Logger))
	registerGroup[workflows.SupportActivities](w, activities.NewSupportTickets(deps.Store, activities.WithSupportMetrics(deps.Metrics)))
	registerGroup[workflows.TrackerActivities](w, activities.NewTracker(deps.Store, tracker.NewClient(whClient), deps.Logger, deps.PublicBaseURL))
	registerGroup[workflows.ReportsActivities](w, activities.NewReports(deps.Store, deps.Blobs, deps.PublicBaseURL, deps.ReportLinkTTL))
	registerGroup[workflows.AnalyticsReportsActivities](w, activities.NewAnalyticsReports(deps.Store, deps.Blobs, deps.PublicBaseURL, deps.ReportLinkTTL))
}

// registerGroup registers every exported method of impl, the struct that
// implements the activity interface I, as an activity named
// workflows.ActivityPrefix[I]() + the method's name.
func registerGroup[I any](w ActivityRegistry, impl I) {
	w.RegisterActivityWithOptions(impl, activity.RegisterOptions{Name: workflows.ActivityPrefix[I]()})
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
