package events

import (
	"context"
	"net/url"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/eventlog"
	"github.com/telcoplatform/platform/models/support"
	"github.com/telcoplatform/platform/workflows"
)

// CheckTrackerURL checks a tracker integration's tracker_url: the rules of
// a chat integration's webhook_url (https to a public host, or http to a
// loopback host where private targets are allowed), and no query or
// fragment (the API paths are appended to it). Errors: VALIDATION_ERROR on
// tracker_url; DEPENDENCY_UNAVAILABLE when the host could not be resolved
// for a reason other than not existing.
func (s *Subscriptions) CheckTrackerURL(ctx context.Context, raw string) error {
	var inner, v models.Validator
	if err := s.checkChatURL(ctx, &inner, raw); err != nil {
		return err
	}
	for _, f := range fieldsOf(inner.Err()) {
		v.Add("tracker_url", f.Issue)
	}
	if u, err := url.Parse(raw); err == nil && inner.Err() == nil {
		v.Check(u.RawQuery == "" && u.Fragment == "", "tracker_url", "must have no query nor fragment: the tracker's base URL")
	}
	return v.Err()
}

// trackerEvents are the support events that may give a tracker integration
// work: a new ticket, a new comment, a changed priority.
var trackerEvents = map[string]bool{support.EventTicketCreated: true, support.EventCommentAdded: true, support.EventTicketUpdated: true}

// signalTrackers asks the sync workflow of each active tracker integration
// of ev's organization and environment for a round (signal-with-start of
// workflows.TrackerSync, one per integration). A repeated signal only
// costs a round: what the round does is idempotent.
func (d *Dispatcher) signalTrackers(ctx context.Context, ev *eventlog.Event) error {
	if !trackerEvents[ev.Type] || d.tc == nil {
		return nil
	}
	trackers, err := d.support.ActiveTrackerIntegrations(ctx, models.TenantScope(ev.OrganizationID, ev.Environment))
	if err != nil || len(trackers) == 0 {
		return err
	}
	for i := range trackers {
		c := &trackers[i]
		if err := StartTrackerSync(ctx, d.tc, d.opts.TaskQueue, workflows.TrackerSyncInput{IntegrationID: c.ID, OrganizationID: c.OrganizationID,
			Environment: c.Environment, PollInterval: d.opts.TrackerPollInterval, RetryInterval: d.opts.TrackerRetryInterval}); err != nil {
			return err
		}
	}
	return nil
}

// StartTrackerSync signals an integration's sync workflow, starting it
// when it is not running (a workflow that ended, because the integration
// was paused, starts afresh). Errors: DEPENDENCY_UNAVAILABLE.
func StartTrackerSync(ctx context.Context, tc client.Client, taskQueue string, in workflows.TrackerSyncInput) error {
	opts := workflows.StartOptions(workflows.TaskQueues{Interactive: taskQueue}, workflows.Start{ID: workflows.TrackerSyncID(in.IntegrationID),
		Priority: workflows.Interactive, OrganizationID: in.OrganizationID, Environment: in.Environment, OperationType: "tracker_sync", ResourceID: in.IntegrationID})
	opts.WorkflowExecutionErrorWhenAlreadyStarted = false
	opts.WorkflowIDReusePolicy = enums.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE
	sctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	if _, err := tc.SignalWithStartWorkflow(sctx, opts.ID, workflows.TrackerSyncSignal, nil, opts, workflows.TrackerSyncWorkflow, in); err != nil {
		e := models.Errorf(models.CodeDependencyUnavailable, "the workflow engine is unavailable")
		e.Cause = err
		return e
	}
	return nil
}
