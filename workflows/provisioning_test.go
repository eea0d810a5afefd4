package workflows_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/catalog"
	"github.com/telcoplatform/platform/models/eventlog"
	"github.com/telcoplatform/platform/models/operations"
	"github.com/telcoplatform/platform/models/services"
	"github.com/telcoplatform/platform/simulator"
	"github.com/telcoplatform/platform/testenv"
	"github.com/telcoplatform/platform/worker"
	"github.com/telcoplatform/platform/workflows"
)

var stepActivities = []string{workflows.ActivityName(workflows.ProvisioningActivities.Validate), workflows.ActivityName(workflows.ProvisioningActivities.ReserveCapacity), workflows.ActivityName(workflows.ProvisioningActivities.Configure), workflows.ActivityName(workflows.ProvisioningActivities.Activate)}

// mockedEnv returns a test environment running the provisioning workflow
// against stub activities, and a recorder of the activities called, in order.
// overrides sets the test's own mocks; they take precedence over the
// defaults (every activity succeeds), which are added after them.
func mockedEnv(t *testing.T, overrides func(env *testsuite.TestWorkflowEnvironment, rec *calls)) (*testsuite.TestWorkflowEnvironment, *calls) {
	t.Helper()
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	env.RegisterWorkflowWithOptions(workflows.Provisioning, workflow.RegisterOptions{Name: workflows.ProvisioningWorkflow})
	rec := &calls{}
	plain := append(slices.Clone(stepActivities), workflows.ActivityName(workflows.ProvisioningActivities.Begin), workflows.ActivityName(workflows.ProvisioningActivities.ReleaseCapacity), workflows.ActivityName(workflows.ProvisioningActivities.ReleaseNetwork), workflows.ActivityName(workflows.ProvisioningActivities.Deactivate))
	stub := func(context.Context, workflows.ProvisioningInput) error { return nil }
	for _, name := range plain {
		env.RegisterActivityWithOptions(stub, activity.RegisterOptions{Name: name})
	}
	env.RegisterActivityWithOptions(func(context.Context, workflows.ProvisioningInput) (*workflows.ProvisioningResult, error) {
		return nil, nil
	},
		activity.RegisterOptions{Name: workflows.ActivityName(workflows.ProvisioningActivities.RecordService)})
	env.RegisterActivityWithOptions(func(context.Context, workflows.StepInput) error { return nil }, activity.RegisterOptions{Name: workflows.ActivityName(workflows.ProvisioningActivities.MarkStep)})
	env.RegisterActivityWithOptions(func(context.Context, workflows.FinishInput) error { return nil }, activity.RegisterOptions{Name: workflows.ActivityName(workflows.ProvisioningActivities.Finish)})

	if overrides != nil {
		overrides(env, rec)
	}
	for _, name := range plain {
		env.OnActivity(name, mock.Anything, mock.Anything).Return(nil).Run(rec.record(name)).Maybe()
	}
	env.OnActivity(workflows.ActivityName(workflows.ProvisioningActivities.RecordService), mock.Anything, mock.Anything).
		Return(&workflows.ProvisioningResult{ServiceID: "svc_test", Status: "operational"}, nil).Run(rec.record(workflows.ActivityName(workflows.ProvisioningActivities.RecordService))).Maybe()
	env.OnActivity(workflows.ActivityName(workflows.ProvisioningActivities.MarkStep), mock.Anything, mock.Anything).Return(nil).Run(func(args mock.Arguments) {
		in := args.Get(1).(workflows.StepInput)
		rec.add(workflows.ActivityName(workflows.ProvisioningActivities.MarkStep) + ":" + in.Step + map[bool]string{true: ":done", false: ":start"}[in.Done])
	}).Maybe()
	env.OnActivity(workflows.ActivityName(workflows.ProvisioningActivities.Finish), mock.Anything, mock.Anything).Return(nil).Run(func(args mock.Arguments) {
		in := args.Get(1).(workflows.FinishInput)
		rec.mu.Lock()
		rec.finish = &in
		rec.mu.Unlock()
		rec.add(workflows.ActivityName(workflows.ProvisioningActivities.Finish))
	}).Maybe()
	return env, rec
}

type calls struct {
	mu     sync.Mutex
	names  []string
	finish *workflows.FinishInput
}

func (c *calls) add(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.names = append(c.names, name)
}

func (c *calls) record(name string) func(mock.Arguments) {
	return func(mock.Arguments) { c.add(name) }
}

func (c *calls) list() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.names)
}

func input() workflows.ProvisioningInput {
	return workflows.ProvisioningInput{RequestID: "prov_test", OrganizationID: "org_test", Environment: models.EnvLive, ServiceID: "svc_test",
		Order: services.ProvisioningOrder{ServiceType: "fiber_dedicated", LocationID: "loc_austin_congress", Bandwidth: "1gbps", BandwidthMbps: 1000}}
}

func TestProvisioningHappyPath(t *testing.T) {
	env, rec := mockedEnv(t, nil)
	env.ExecuteWorkflow(workflows.ProvisioningWorkflow, input())
	if !env.IsWorkflowCompleted() || env.GetWorkflowError() != nil {
		t.Fatalf("workflow error: %v", env.GetWorkflowError())
	}
	var res workflows.ProvisioningResult
	if err := env.GetWorkflowResult(&res); err != nil || res.ServiceID != "svc_test" || res.Status != "operational" {
		t.Fatalf("result %+v %v", res, err)
	}
	want := []string{workflows.ActivityName(workflows.ProvisioningActivities.Begin), workflows.ActivityName(workflows.ProvisioningActivities.Validate), workflows.ActivityName(workflows.ProvisioningActivities.ReserveCapacity), workflows.ActivityName(workflows.ProvisioningActivities.Configure),
		workflows.ActivityName(workflows.ProvisioningActivities.Activate), workflows.ActivityName(workflows.ProvisioningActivities.RecordService)}
	if got := rec.list(); !slices.Equal(got, want) {
		t.Fatalf("activities %v, want %v", got, want)
	}
	v, err := env.QueryWorkflow(workflows.QueryProgress)
	if err != nil {
		t.Fatal(err)
	}
	var progress workflows.ProvisioningProgress
	if err := v.Get(&progress); err != nil || progress.Phase != workflows.PhaseDone || len(progress.Completed) != 5 {
		t.Fatalf("progress %+v %v", progress, err)
	}
}

func TestProvisioningFailureAtEachStepCompensates(t *testing.T) {
	tests := []struct {
		step        string
		activity    string
		compensated []string // compensation activities, in the order they must run
	}{
		{operations.StepValidate, workflows.ActivityName(workflows.ProvisioningActivities.Validate), nil},
		{operations.StepReserveCapacity, workflows.ActivityName(workflows.ProvisioningActivities.ReserveCapacity), []string{workflows.ActivityName(workflows.ProvisioningActivities.ReleaseCapacity)}},
		{operations.StepConfigure, workflows.ActivityName(workflows.ProvisioningActivities.Configure), []string{workflows.ActivityName(workflows.ProvisioningActivities.ReleaseNetwork), workflows.ActivityName(workflows.ProvisioningActivities.ReleaseCapacity)}},
		{operations.StepActivate, workflows.ActivityName(workflows.ProvisioningActivities.Activate), []string{workflows.ActivityName(workflows.ProvisioningActivities.Deactivate), workflows.ActivityName(workflows.ProvisioningActivities.ReleaseNetwork), workflows.ActivityName(workflows.ProvisioningActivities.ReleaseCapacity)}},
		{operations.StepRecordService, workflows.ActivityName(workflows.ProvisioningActivities.RecordService), []string{workflows.ActivityName(workflows.ProvisioningActivities.Deactivate), workflows.ActivityName(workflows.ProvisioningActivities.ReleaseNetwork), workflows.ActivityName(workflows.ProvisioningActivities.ReleaseCapacity)}},
	}
	for _, tc := range tests {
		t.Run(tc.step, func(t *testing.T) {
			failure := temporal.NewNonRetryableApplicationError("the network rejected the step", string(models.CodeProvisioningFailed), nil, map[string]any{"sandbox": true})
			env, rec := mockedEnv(t, func(env *testsuite.TestWorkflowEnvironment, rec *calls) {
				if tc.activity == workflows.ActivityName(workflows.ProvisioningActivities.RecordService) {
					env.OnActivity(tc.activity, mock.Anything, mock.Anything).Return(nil, failure).Run(rec.record(tc.activity)).Once()
				} else {
					env.OnActivity(tc.activity, mock.Anything, mock.Anything).Return(failure).Run(rec.record(tc.activity)).Once()
				}
			})
			env.ExecuteWorkflow(workflows.ProvisioningWorkflow, input())
			err := env.GetWorkflowError()
			var appErr *temporal.ApplicationError
			if !errors.As(err, &appErr) || appErr.Type() != string(models.CodeProvisioningFailed) {
				t.Fatalf("want a PROVISIONING_FAILED error, got %v", err)
			}
			got := rec.list()
			at := slices.Index(got, tc.activity)
			if at < 0 || got[len(got)-1] != workflows.ActivityName(workflows.ProvisioningActivities.Finish) {
				t.Fatalf("activities %v", got)
			}
			if comps := got[at+1 : len(got)-1]; !slices.Equal(comps, tc.compensated) {
				t.Fatalf("compensations %v, want %v", comps, tc.compensated)
			}
			fin := rec.finish
			if fin.Status != operations.OpFailed || fin.FailedStep != tc.step || fin.Error == nil || fin.Error.Code != models.CodeProvisioningFailed ||
				fin.Error.Details["step"] != tc.step || fin.Error.Details["reason_code"] != string(models.CodeProvisioningFailed) ||
				fin.Error.Details["compensated"] != true || fin.Error.Details["sandbox"] != true || len(fin.Compensated) != len(tc.compensated) ||
				len(fin.Compensations) != len(tc.compensated) {
				t.Fatalf("finish %+v (error %+v)", fin, fin.Error)
			}
		})
	}
}

func TestProvisioningCompensationFailureIsReported(t *testing.T) {
	env, rec := mockedEnv(t, func(env *testsuite.TestWorkflowEnvironment, rec *calls) {
		env.OnActivity(workflows.ActivityName(workflows.ProvisioningActivities.Activate), mock.Anything, mock.Anything).
			Return(temporal.NewNonRetryableApplicationError("no light", string(models.CodeProvisioningFailed), nil)).Once()
		env.OnActivity(workflows.ActivityName(workflows.ProvisioningActivities.ReleaseNetwork), mock.Anything, mock.Anything).
			Return(temporal.NewNonRetryableApplicationError("controller unreachable", string(models.CodeDependencyUnavailable), nil)).Once()
	})
	env.ExecuteWorkflow(workflows.ProvisioningWorkflow, input())
	if env.GetWorkflowError() == nil {
		t.Fatal("want an error")
	}
	fin := rec.finish
	if fin.Status != operations.OpFailed || fin.Error.Details["compensated"] != false || len(fin.CompensationErrors) != 1 ||
		!slices.Equal(fin.Compensated, []string{operations.StepActivate, operations.StepReserveCapacity}) {
		t.Fatalf("finish %+v", fin)
	}
	if !slices.Contains(rec.list(), workflows.ActivityName(workflows.ProvisioningActivities.ReleaseCapacity)) {
		t.Fatal("a failed compensation must not stop the others")
	}
}

func TestProvisioningCancelledDuringAStep(t *testing.T) {
	env, rec := mockedEnv(t, func(env *testsuite.TestWorkflowEnvironment, rec *calls) {
		// configure takes an hour of workflow time; the cancellation comes after ten minutes.
		env.OnActivity(workflows.ActivityName(workflows.ProvisioningActivities.Configure), mock.Anything, mock.Anything).After(time.Hour).Return(nil).Run(rec.record(workflows.ActivityName(workflows.ProvisioningActivities.Configure))).Once()
	})
	env.RegisterDelayedCallback(env.CancelWorkflow, 10*time.Minute)
	env.ExecuteWorkflow(workflows.ProvisioningWorkflow, input())
	if err := env.GetWorkflowError(); !temporal.IsCanceledError(err) {
		t.Fatalf("want the cancellation, got %v", err)
	}
	got := rec.list()
	if slices.Contains(got, workflows.ActivityName(workflows.ProvisioningActivities.Activate)) || slices.Contains(got, workflows.ActivityName(workflows.ProvisioningActivities.RecordService)) {
		t.Fatalf("steps after the cancellation ran: %v", got)
	}
	at := slices.Index(got, workflows.ActivityName(workflows.ProvisioningActivities.ReleaseNetwork))
	if at < 0 || got[at+1] != workflows.ActivityName(workflows.ProvisioningActivities.ReleaseCapacity) || got[len(got)-1] != workflows.ActivityName(workflows.ProvisioningActivities.Finish) {
		t.Fatalf("compensation on cancellation: %v", got)
	}
	if fin := rec.finish; fin.Status != operations.OpCancelled || fin.FailedStep != operations.StepConfigure || fin.Error != nil {
		t.Fatalf("finish %+v", fin)
	}
}

func TestProvisioningWaitsForTheScheduleAndCanBeCancelledMeanwhile(t *testing.T) {
	t.Run("runs at the preferred date", func(t *testing.T) {
		start := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
		when := start.Add(48 * time.Hour)
		var validatedAt time.Time
		env, rec := mockedEnv(t, func(env *testsuite.TestWorkflowEnvironment, rec *calls) {
			env.OnActivity(workflows.ActivityName(workflows.ProvisioningActivities.Validate), mock.Anything, mock.Anything).Return(nil).Run(func(mock.Arguments) {
				validatedAt = env.Now()
				rec.add(workflows.ActivityName(workflows.ProvisioningActivities.Validate))
			}).Once()
		})
		env.SetStartTime(start)
		in := input()
		in.Scheduled, in.Order.PreferredDate = true, &when
		env.ExecuteWorkflow(workflows.ProvisioningWorkflow, in)
		if env.GetWorkflowError() != nil {
			t.Fatal(env.GetWorkflowError())
		}
		if validatedAt.Before(when) {
			t.Fatalf("validated at %v, before the preferred date %v", validatedAt, when)
		}
		got := rec.list()
		if len(got) < 3 || got[1] != workflows.ActivityName(workflows.ProvisioningActivities.MarkStep)+":wait_for_schedule:start" || got[2] != workflows.ActivityName(workflows.ProvisioningActivities.MarkStep)+":wait_for_schedule:done" {
			t.Fatalf("activities %v", got)
		}
	})
	t.Run("cancelled while waiting", func(t *testing.T) {
		env, rec := mockedEnv(t, nil)
		in := input()
		when := time.Now().Add(30 * 24 * time.Hour)
		in.Scheduled, in.Order.PreferredDate = true, &when
		env.RegisterDelayedCallback(env.CancelWorkflow, 24*time.Hour)
		env.ExecuteWorkflow(workflows.ProvisioningWorkflow, in)
		if err := env.GetWorkflowError(); !temporal.IsCanceledError(err) {
			t.Fatalf("want the cancellation, got %v", err)
		}
		if got := rec.list(); slices.Contains(got, workflows.ActivityName(workflows.ProvisioningActivities.Validate)) || got[len(got)-1] != workflows.ActivityName(workflows.ProvisioningActivities.Finish) {
			t.Fatalf("activities %v", got)
		}
		if fin := rec.finish; fin.Status != operations.OpCancelled || fin.FailedStep != operations.StepSchedule || len(fin.Compensated) != 0 {
			t.Fatalf("finish %+v", fin)
		}
	})
}

// flakyNetwork loses the answer of the first call of each allocation: the
// allocation is made, then the activity fails as if the connection dropped,
// and Temporal retries it.
type flakyNetwork struct {
	simulator.Southbound
	mu    sync.Mutex
	calls map[string]int
}

func (f *flakyNetwork) count(name string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls[name]++
	return f.calls[name]
}

func lost() error { return models.Internal(errors.New("connection reset after the network answered")) }

func (f *flakyNetwork) ReserveCapacity(ctx context.Context, o simulator.Order) (simulator.Reservation, error) {
	r, err := f.Southbound.ReserveCapacity(ctx, o)
	if err == nil && f.count("reserve") == 1 {
		return simulator.Reservation{}, lost()
	}
	return r, err
}

func (f *flakyNetwork) AllocateIP(ctx context.Context, o simulator.Order) (simulator.IPAssignment, error) {
	ip, err := f.Southbound.AllocateIP(ctx, o)
	if err == nil && f.count("ip") == 1 {
		return simulator.IPAssignment{}, lost()
	}
	return ip, err
}

func (f *flakyNetwork) AllocateVLAN(ctx context.Context, o simulator.Order) (int, error) {
	v, err := f.Southbound.AllocateVLAN(ctx, o)
	if err == nil && f.count("vlan") == 1 {
		return 0, lost()
	}
	return v, err
}

// realEnv runs the workflow with the real activities on a real database.
func realEnv(t *testing.T, net func(*models.Store) simulator.Southbound) (*testsuite.TestWorkflowEnvironment, *models.Store, string) {
	t.Helper()
	store, seeded := testenv.SeededStore(t)
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	deps := worker.Deps{Store: store}
	if net != nil {
		deps.Southbound = net(store)
	}
	worker.Register(env, deps)
	return env, store, seeded.Demo.ID
}

func acceptOrder(t *testing.T, store *models.Store, org string, env models.Environment, loc catalog.LocationInput) workflows.ProvisioningInput {
	t.Helper()
	ctx := context.Background()
	p := &models.Principal{ID: "ak_x", OrganizationID: org, Environment: env, Role: models.RoleCustomer, Permissions: []string{"*"}}
	var acct models.BillingAccount
	if err := store.In(ctx, p.OwnScope()).Order("created_at").Take(&acct).Error; err != nil {
		t.Fatal(err)
	}
	o, scope, err := services.NewStore(store).PrepareInternetOrder(ctx, p, services.InternetInput{AccountID: acct.ID, ServiceType: "fiber_dedicated", Bandwidth: "1gbps", Location: loc, SLA: "premium"})
	if err != nil {
		t.Fatal(err)
	}
	in := workflows.ProvisioningInput{RequestID: models.NewID(models.PrefixProvisioning), OrganizationID: scope.OrganizationID, Environment: scope.Environment,
		ServiceID: models.NewID(models.PrefixService), Order: *o}
	if err := operations.NewStore(store).CreateOperation(ctx, scope, operations.NewOperation(in.RequestID, operations.OpTypeProvisioning, in.ServiceID, p.ID, operations.ProvisioningSteps(false), nil)); err != nil {
		t.Fatal(err)
	}
	return in
}

func TestProvisioningRetriedActivitiesNeverAllocateTwice(t *testing.T) {
	var flaky *flakyNetwork
	env, store, org := realEnv(t, func(s *models.Store) simulator.Southbound {
		flaky = &flakyNetwork{Southbound: simulator.New(s, simulator.Options{}), calls: map[string]int{}}
		return flaky
	})
	in := acceptOrder(t, store, org, models.EnvLive, catalog.LocationInput{Address: "100 Congress Ave", City: "Austin", State: "TX", Zip: "78701"})
	env.ExecuteWorkflow(workflows.ProvisioningWorkflow, in)
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if flaky.calls["reserve"] != 2 || flaky.calls["ip"] < 2 || flaky.calls["vlan"] < 2 {
		t.Fatalf("the activities were not retried: %v", flaky.calls)
	}
	ctx := context.Background()
	allocs, err := catalog.NewStore(store).Allocations(ctx, in.Scope(), in.RequestID)
	if err != nil || len(allocs) != 3 {
		t.Fatalf("allocations %+v %v", allocs, err)
	}
	c, _ := catalog.NewStore(store).Capacity(ctx, models.EnvLive, "loc_austin_congress", "fiber_dedicated")
	if c.AllocatedMbps != 1000 {
		t.Fatalf("allocated %d Mbps, want 1000", c.AllocatedMbps)
	}
	p := &models.Principal{OrganizationID: in.OrganizationID, Environment: in.Environment, Permissions: []string{"*"}}
	svc, _ := services.NewStore(store).GetService(ctx, p, in.ServiceID)
	op, _ := operations.NewStore(store).GetOperation(ctx, p, in.RequestID)
	if svc.Status != services.ServiceOperational || op.Status != operations.OpCompleted || svc.IPBlock != allocs[1].CIDR {
		t.Fatalf("service %s %s, operation %s", svc.Status, svc.IPBlock, op.Status)
	}
}

func TestProvisioningSandboxFailureReleasesEverything(t *testing.T) {
	for _, tc := range []struct {
		address string
		step    string
	}{
		{"10 Failure Ave", operations.StepValidate},
		{"20 Failure Ave", operations.StepReserveCapacity},
		{"30 Failure Ave", operations.StepConfigure},
		{"40 Failure Ave", operations.StepActivate},
		{"50 Failure Ave", operations.StepRecordService},
	} {
		t.Run(tc.step, func(t *testing.T) {
			env, store, org := realEnv(t, nil)
			in := acceptOrder(t, store, org, models.EnvTest, catalog.LocationInput{Address: tc.address, City: "Testville", State: "CA", Zip: "94001"})
			env.ExecuteWorkflow(workflows.ProvisioningWorkflow, in)
			var appErr *temporal.ApplicationError
			if err := env.GetWorkflowError(); !errors.As(err, &appErr) || appErr.Type() != string(models.CodeProvisioningFailed) {
				t.Fatalf("want PROVISIONING_FAILED, got %v", err)
			}
			ctx := context.Background()
			allocs, _ := catalog.NewStore(store).Allocations(ctx, in.Scope(), in.RequestID)
			for _, a := range allocs {
				if a.ReleasedAt == nil {
					t.Fatalf("%s still allocated", a.Kind)
				}
			}
			c, _ := catalog.NewStore(store).Capacity(ctx, models.EnvTest, in.Order.LocationID, "fiber_dedicated")
			left, _ := catalog.NewStore(store).AvailableMbps(ctx, in.Scope(), in.Order.LocationID, "fiber_dedicated")
			p := &models.Principal{OrganizationID: in.OrganizationID, Environment: in.Environment, Permissions: []string{"*"}}
			svc, _ := services.NewStore(store).GetService(ctx, p, in.ServiceID)
			op, _ := operations.NewStore(store).GetOperation(ctx, p, in.RequestID)
			if left != c.CapacityMbps || svc.Status != services.ServiceFailed || op.Status != operations.OpFailed || op.Error.Code != models.CodeProvisioningFailed || op.Error.Details["step"] != tc.step {
				t.Fatalf("%d of %d Mbps left, service %s, operation %s %+v", left, c.CapacityMbps, svc.Status, op.Status, op.Error)
			}
			for _, st := range op.Steps {
				if st.Name == tc.step && st.Status != operations.StepFailed {
					t.Fatalf("step %s is %s", st.Name, st.Status)
				}
			}
			// Only its status moves: no service.provisioned, and the last one is to failed.
			evs, _ := eventlog.NewStore(store).EventsFor(ctx, in.Scope(), in.ServiceID)
			for _, ev := range evs {
				if ev.Type != "service.status_changed" {
					t.Fatalf("a failed provisioning wrote %s", ev.Type)
				}
			}
			if len(evs) == 0 || evs[len(evs)-1].Data["to"] != "failed" || evs[len(evs)-1].Data["reason"] != "provisioning_failed" {
				t.Fatalf("a failed provisioning wrote %+v", evs)
			}
		})
	}
}
