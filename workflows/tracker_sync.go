package workflows

import (
	"context"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/support"
)

// TrackerSyncWorkflow is the registered name of a tracker integration's
// sync workflow.
const TrackerSyncWorkflow = "TrackerSync"

// TrackerSyncSignal asks a tracker integration's sync workflow for a round
// now (the events dispatcher sends it, with signal-with-start, for each
// support event of the integration's organization and environment). It
// carries no value.
const TrackerSyncSignal = "tracker-sync"

// TrackerSyncHistoryLimit is the history length past which the workflow
// continues as new (its state lives in the database: nothing is lost).
const TrackerSyncHistoryLimit = 2000

// DefaultTrackerPollInterval is how often the tracker is read for new
// comments and status changes when the input names no interval.
const DefaultTrackerPollInterval = time.Minute

// TrackerPlanMax bounds the items of each kind one round handles.
const TrackerPlanMax = 20

// TrackerRejectedError is the type of the non-retryable application error
// of a call the tracker refused (a 4xx other than 408 and 429).
const TrackerRejectedError = "TRACKER_REJECTED"

// TrackerSyncInput is the one argument of the workflow.
type TrackerSyncInput struct {
	IntegrationID  string             `json:"integration_id"`
	OrganizationID string             `json:"organization_id"`
	Environment    models.Environment `json:"environment"`
	// PollInterval is how often the links are polled (default
	// DefaultTrackerPollInterval).
	PollInterval time.Duration `json:"poll_interval,omitempty"`
	// RetryInterval is the first retry delay of the calls (default 1 s).
	RetryInterval time.Duration `json:"retry_interval,omitempty"`
}

// TrackerRef names an integration and, for the per-item activities, the
// item: a ticket (EnsureIssue), a comment (PushComment) or a link (PollLink).
type TrackerRef struct {
	IntegrationID  string             `json:"integration_id"`
	OrganizationID string             `json:"organization_id"`
	Environment    models.Environment `json:"environment"`
	ItemID         string             `json:"item_id,omitempty"`
}

// Scope is the integration's organization and environment.
func (r TrackerRef) Scope() models.Scope { return models.TenantScope(r.OrganizationID, r.Environment) }

// TrackerIssueResult is the issue of a ticket.
type TrackerIssueResult struct {
	Key     string `json:"key"`
	Adopted bool   `json:"adopted"` // found by its label, not created by this call
}

// TrackerPollResult is what a poll of a link read.
type TrackerPollResult struct {
	Status   string `json:"status"`
	Imported int    `json:"imported"`
}

// TrackerActivities are the activities of the TrackerSync workflow
// (activities.Tracker), named "Tracker.<Method>". Each is idempotent: a
// retry finds what an earlier attempt did (the link row, the issue by its
// label, the posted comment by its reference, the imported comment by its
// mark) instead of doing it again.
type TrackerActivities interface {
	Plan(ctx context.Context, in TrackerRef) (*support.TrackerPlan, error)
	EnsureIssue(ctx context.Context, in TrackerRef) (*TrackerIssueResult, error)
	PushComment(ctx context.Context, in TrackerRef) error
	PollLink(ctx context.Context, in TrackerRef) (*TrackerPollResult, error)
}

// TrackerSyncID is the workflow id of an integration's sync workflow.
func TrackerSyncID(integrationID string) string { return "tracker-sync-" + integrationID }

// TrackerSync keeps a tracker integration in step with its tracker. Each
// round plans (Tracker.Plan: what is waiting), creates or finds the issue
// of each new ticket, posts each new customer-visible comment, and, when
// the poll timer has fired, reads each open link's comments and status;
// then it waits on a durable timer (PollInterval) or a signal
// (TrackerSyncSignal). A failed item is logged and tried again next round
// (the plan finds it again). It ends when the integration is deleted or
// paused, and continues as new past TrackerSyncHistoryLimit events.
//
// Changes to this function must keep replaying the recorded histories
// (worker's replay test): new steps go behind workflow.GetVersion.
func TrackerSync(ctx workflow.Context, in TrackerSyncInput) error {
	interval := in.PollInterval
	if interval <= 0 {
		interval = DefaultTrackerPollInterval
	}
	retry := in.RetryInterval
	if retry <= 0 {
		retry = time.Second
	}
	log := workflow.GetLogger(ctx)
	signals := workflow.GetSignalChannel(ctx, TrackerSyncSignal)
	planCtx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: retry, BackoffCoefficient: 2, MaximumInterval: 5 * time.Minute},
	})
	itemCtx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: retry, BackoffCoefficient: 2, MaximumInterval: time.Minute, MaximumAttempts: 5,
			NonRetryableErrorTypes: []string{TrackerRejectedError}},
	})
	ref := TrackerRef{IntegrationID: in.IntegrationID, OrganizationID: in.OrganizationID, Environment: in.Environment}
	item := func(id string) TrackerRef { r := ref; r.ItemID = id; return r }
	subject := fmt.Sprintf("integration %s of %s (%s)", in.IntegrationID, in.OrganizationID, in.Environment)
	pollDue := true
	var timer workflow.Future
	for {
		for signals.ReceiveAsync(nil) { // every pending request is answered by this round
		}
		var plan support.TrackerPlan
		if err := call(summarized(planCtx, "plan a round: "+subject), TrackerActivities.Plan, ref).Get(ctx, &plan); err != nil {
			return err
		}
		if plan.Stop {
			return nil
		}
		for _, id := range plan.TicketIDs {
			if err := call(summarized(itemCtx, "make the issue of ticket "+id+": "+subject), TrackerActivities.EnsureIssue, item(id)).Get(ctx, nil); err != nil {
				log.Warn("the ticket's issue could not be made; next round tries again", "ticket_id", id, "error", err)
			}
		}
		for _, id := range plan.CommentIDs {
			if err := execute(summarized(itemCtx, "post comment "+id+": "+subject), TrackerActivities.PushComment, item(id)).Get(ctx, nil); err != nil {
				log.Warn("the comment could not be posted; next round tries again", "comment_id", id, "error", err)
			}
		}
		if pollDue {
			for _, id := range plan.LinkIDs {
				if err := call(summarized(itemCtx, "read the issue of link "+id+": "+subject), TrackerActivities.PollLink, item(id)).Get(ctx, nil); err != nil {
					log.Warn("the issue could not be read; next poll tries again", "link_id", id, "error", err)
				}
			}
			pollDue = false
			timer = workflow.NewTimer(ctx, interval)
		}
		if workflow.GetInfo(ctx).GetCurrentHistoryLength() > TrackerSyncHistoryLimit && signals.Len() == 0 {
			return workflow.NewContinueAsNewError(ctx, TrackerSyncWorkflow, in)
		}
		sel := workflow.NewSelector(ctx)
		sel.AddReceive(signals, func(c workflow.ReceiveChannel, _ bool) { c.Receive(ctx, nil) })
		sel.AddFuture(timer, func(workflow.Future) { pollDue = true })
		sel.Select(ctx)
	}
}
