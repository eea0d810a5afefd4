package workflows_test

import (
	"context"
	"testing"

	"go.temporal.io/sdk/testsuite"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/catalog"
	"github.com/telcoplatform/platform/models/eventlog"
	"github.com/telcoplatform/platform/models/operations"
	"github.com/telcoplatform/platform/models/services"
	"github.com/telcoplatform/platform/worker"
	"github.com/telcoplatform/platform/workflows"
)

// servicesEnv is a real database with the platform's activities, from
// which test workflow environments are made (one per workflow run).
type servicesEnv struct {
	t     *testing.T
	store *models.Store
	org   string
	suite testsuite.WorkflowTestSuite
}

func newServicesEnv(t *testing.T) *servicesEnv {
	t.Helper()
	_, store, org := realEnv(t, nil)
	return &servicesEnv{t: t, store: store, org: org}
}

// env returns a fresh test workflow environment with every workflow and activity registered.
func (e *servicesEnv) env() *testsuite.TestWorkflowEnvironment {
	env := e.suite.NewTestWorkflowEnvironment()
	worker.Register(env, worker.Deps{Store: e.store})
	return env
}

func (e *servicesEnv) principal(env models.Environment) *models.Principal {
	return &models.Principal{ID: "ak_x", OrganizationID: e.org, Environment: env, Role: models.RoleCustomer, Permissions: []string{"*"}}
}

// provision accepts body for the demo tenant in env and runs its
// provisioning workflow to the end; it returns the input and the error.
func (e *servicesEnv) provision(env models.Environment, body services.KindBody) (workflows.ProvisioningInput, error) {
	e.t.Helper()
	ctx := context.Background()
	o, scope, err := services.NewStore(e.store).PrepareServiceOrder(ctx, e.principal(env), body)
	if err != nil {
		e.t.Fatal(err)
	}
	in := workflows.ProvisioningInput{RequestID: models.NewID(models.PrefixProvisioning), OrganizationID: scope.OrganizationID, Environment: scope.Environment,
		ServiceID: models.NewID(models.PrefixService), Order: *o, Scheduled: o.PreferredDate != nil}
	if err := operations.NewStore(e.store).CreateOperation(ctx, scope, operations.NewOperation(in.RequestID, operations.OpTypeProvisioning, in.ServiceID, "ak_x", operations.ProvisioningSteps(in.Scheduled), nil)); err != nil {
		e.t.Fatal(err)
	}
	wenv := e.env()
	wenv.ExecuteWorkflow(workflows.ProvisioningWorkflow, in)
	return in, wenv.GetWorkflowError()
}

func (e *servicesEnv) service(env models.Environment, id string) *services.Service {
	e.t.Helper()
	svc, err := services.NewStore(e.store).GetService(context.Background(), e.principal(env), id)
	if err != nil {
		e.t.Fatal(err)
	}
	return svc
}

func (e *servicesEnv) operation(env models.Environment, id string) *operations.Operation {
	e.t.Helper()
	op, err := operations.NewStore(e.store).GetOperation(context.Background(), e.principal(env), id)
	if err != nil {
		e.t.Fatal(err)
	}
	return op
}

func (e *servicesEnv) eventTypes(scope models.Scope, id string) []string {
	e.t.Helper()
	evs, err := eventlog.NewStore(e.store).EventsFor(context.Background(), scope, id)
	if err != nil {
		e.t.Fatal(err)
	}
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = ev.Type
	}
	return out
}

func (e *servicesEnv) active(scope models.Scope, serviceID string) map[catalog.AllocationKind]int {
	e.t.Helper()
	allocs, err := catalog.NewStore(e.store).ServiceAllocations(context.Background(), scope, serviceID)
	if err != nil {
		e.t.Fatal(err)
	}
	out := map[catalog.AllocationKind]int{}
	for _, a := range allocs {
		out[a.Kind]++
	}
	return out
}
