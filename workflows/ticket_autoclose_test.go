package workflows_test

import (
	"context"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/telcoplatform/platform/activities"
	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/identity"
	"github.com/telcoplatform/platform/models/support"
	"github.com/telcoplatform/platform/testenv"
	"github.com/telcoplatform/platform/workflows"
)

// TestTicketAutoClose runs the workflow with its real activity on a real
// store: after the quiet period (the test clock skips it) the resolved
// ticket is closed; a ticket changed in between is left alone.
func TestTicketAutoClose(t *testing.T) {
	ctx := context.Background()
	store, seeded := testenv.SeededStore(t)
	s := support.NewStore(store)
	prov, err := identity.NewStore(store).EnsureProviderOrganization(ctx)
	if err != nil {
		t.Fatal(err)
	}
	staff := &models.Principal{ID: "ak_staff", OrganizationID: prov.ID, Environment: models.EnvLive, Role: models.RoleAgent, Permissions: []string{"*"}}
	customer := &models.Principal{ID: "ak_cust", OrganizationID: seeded.Demo.ID, Environment: models.EnvLive, Role: models.RoleCustomer, Permissions: []string{"*"}}
	resolved := func() support.AutoClose {
		tk, err := s.CreateTicket(ctx, customer, support.TicketInput{Title: "t", Description: "d", Category: "general"})
		if err != nil {
			t.Fatal(err)
		}
		st := support.StatusResolved
		res, err := s.UpdateTicket(ctx, staff, tk.ID, support.UpdateInput{Status: &st})
		if err != nil {
			t.Fatal(err)
		}
		in, _ := support.AutoCloseOf(res.Ticket)
		return in
	}
	run := func(in support.AutoClose, between func()) (bool, time.Duration) {
		var suite testsuite.WorkflowTestSuite
		env := suite.NewTestWorkflowEnvironment()
		env.RegisterWorkflowWithOptions(workflows.TicketAutoClose, workflow.RegisterOptions{Name: workflows.TicketAutoCloseWorkflow})
		env.RegisterActivityWithOptions(activities.NewSupportTickets(store), activity.RegisterOptions{Name: workflows.ActivityPrefix[workflows.SupportActivities]()})
		start := env.Now()
		var waited time.Duration
		env.SetOnActivityStartedListener(func(*activity.Info, context.Context, converter.EncodedValues) {
			waited = env.Now().Sub(start)
			if between != nil {
				between()
			}
		})
		env.ExecuteWorkflow(workflows.TicketAutoCloseWorkflow, workflows.TicketAutoCloseInput{AutoClose: in})
		if !env.IsWorkflowCompleted() || env.GetWorkflowError() != nil {
			t.Fatalf("workflow: completed %v, error %v", env.IsWorkflowCompleted(), env.GetWorkflowError())
		}
		var closed bool
		if err := env.GetWorkflowResult(&closed); err != nil {
			t.Fatal(err)
		}
		return closed, waited
	}
	quiet := resolved()
	closed, waited := run(quiet, nil)
	if !closed || waited < support.AutoCloseAfter {
		t.Fatalf("quiet ticket: closed %v after %v", closed, waited)
	}
	if tk, err := s.GetTicket(ctx, customer, quiet.TicketID); err != nil || tk.Status != support.StatusClosed || tk.ClosedAt == nil {
		t.Fatalf("ticket %+v, %v", tk, err)
	}
	// Reopened by the customer during the quiet period: left open.
	busy := resolved()
	closed, _ = run(busy, func() {
		st := support.StatusOpen
		if _, err := s.UpdateTicket(ctx, customer, busy.TicketID, support.UpdateInput{Status: &st}); err != nil {
			t.Error(err)
		}
	})
	if tk, _ := s.GetTicket(ctx, customer, busy.TicketID); closed || tk.Status != support.StatusOpen {
		t.Fatalf("reopened ticket: closed %v, status %s", closed, tk.Status)
	}
}
