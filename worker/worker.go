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
	// Webhooks sends webhook deliveries; nil means a client that refuses
	// private addresses (webhooks.NewClient(false)).
	Webhooks *webhooks.Client
}

// Register registers every workflow and activity of the platform on w.
func Register(w sdkworker.Registry, deps Deps) {
	net := deps.Southbound
	if net == nil {
		net = simulator.New(deps.Store, simulator.Options{StepDelay: deps.SimulatorStepDelay, Logger: deps.Logger})
	}

	w.RegisterWorkflowWithOptions(workflows.Provisioning, workflow.RegisterOptions{Name: workflows.ProvisioningWorkflow})
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

	w.RegisterWorkflowWithOptions(workflows.WebhookDelivery, workflow.RegisterOptions{Name: workflows.WebhookDeliveryWorkflow})
	whClient := deps.Webhooks
	if whClient == nil {
		whClient = webhooks.NewClient(false)
	}
	wh := activities.NewWebhooks(deps.Store, whClient, deps.Logger)
	w.RegisterActivityWithOptions(wh.Prepare, activity.RegisterOptions{Name: workflows.ActivityWebhookPrepare})
	w.RegisterActivityWithOptions(wh.Attempt, activity.RegisterOptions{Name: workflows.ActivityWebhookAttempt})
	w.RegisterActivityWithOptions(wh.Finish, activity.RegisterOptions{Name: workflows.ActivityWebhookFinish})
}

// New returns a worker polling taskQueue with everything registered.
func New(c client.Client, taskQueue string, deps Deps) sdkworker.Worker {
	w := sdkworker.New(c, taskQueue, sdkworker.Options{})
	Register(w, deps)
	return w
}
