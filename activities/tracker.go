package activities

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"go.temporal.io/sdk/temporal"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/support"
	"github.com/telcoplatform/platform/tracker"
	"github.com/telcoplatform/platform/workflows"
)

// maxTrackerComments bounds the comments of an issue read per poll.
const maxTrackerComments = 1000

// maxTrackerSummary bounds an issue's summary (Jira's limit).
const maxTrackerSummary = 255

// Tracker holds the dependencies of the TrackerSync workflow's activities:
// the support store and the tracker client (over the SSRF-guarded HTTP
// client).
type Tracker struct {
	store   *support.Store
	client  *tracker.Client
	log     *slog.Logger
	baseURL string
}

// NewTracker returns the tracker activities over store, calling trackers
// through client; tickets are linked from issues under baseURL (the API's
// PUBLIC_BASE_URL).
func NewTracker(store *models.Store, client *tracker.Client, log *slog.Logger, baseURL string) *Tracker {
	if log == nil {
		log = slog.Default()
	}
	return &Tracker{store: support.NewStore(store), client: client, log: log, baseURL: strings.TrimRight(baseURL, "/")}
}

// load returns the integration of in and its credentials; nil when it was
// deleted or paused (nothing to do).
func (a *Tracker) load(ctx context.Context, in workflows.TrackerRef) (*support.TrackerIntegration, tracker.Credentials, error) {
	c, err := a.store.TrackerIntegrationIn(ctx, in.Scope(), in.IntegrationID)
	if models.ErrorCode(err) == models.CodeNotFound {
		return nil, tracker.Credentials{}, nil
	}
	if err != nil {
		return nil, tracker.Credentials{}, activityError(err)
	}
	if !c.Active {
		return nil, tracker.Credentials{}, nil
	}
	tok, err := a.store.TrackerToken(c)
	if err != nil {
		return nil, tracker.Credentials{}, activityError(err)
	}
	return c, tracker.Credentials{BaseURL: c.TrackerURL, Username: c.Username, APIToken: tok}, nil
}

// failed records a tracker call's failure on the integration and converts
// it for Temporal: a refusal (4xx other than 408 and 429) is
// non-retryable (workflows.TrackerRejectedError), anything else is retried.
func (a *Tracker) failed(ctx context.Context, c *support.TrackerIntegration, what string, err error) error {
	var te *tracker.Error
	if !errors.As(err, &te) {
		return activityError(err)
	}
	msg := what + ": " + te.Error()
	if rerr := a.store.RecordTrackerError(ctx, c, msg); rerr != nil {
		a.log.WarnContext(ctx, "recording a tracker error failed", "integration_id", c.ID, "error", rerr)
	}
	if te.Retryable() {
		a.log.WarnContext(ctx, "tracker call failed; it will be retried", "integration_id", c.ID, "error", msg)
		return temporal.NewApplicationError(msg, "TRACKER_UNAVAILABLE")
	}
	a.log.InfoContext(ctx, "tracker refused a call", "integration_id", c.ID, "error", msg)
	return temporal.NewNonRetryableApplicationError(msg, workflows.TrackerRejectedError, nil)
}

// succeeded clears the integration's last error after a call that worked.
func (a *Tracker) succeeded(ctx context.Context, c *support.TrackerIntegration) {
	if c.LastError == "" {
		return
	}
	if err := a.store.RecordTrackerError(ctx, c, ""); err != nil {
		a.log.WarnContext(ctx, "clearing a tracker error failed", "integration_id", c.ID, "error", err)
	}
}

// Plan answers what a round of the integration has to do
// (support.Store.PlanTrackerSync). Errors: INTERNAL_ERROR (retried).
func (a *Tracker) Plan(ctx context.Context, in workflows.TrackerRef) (*support.TrackerPlan, error) {
	plan, err := a.store.PlanTrackerSync(ctx, in.Scope(), in.IntegrationID, workflows.TrackerPlanMax)
	if err != nil {
		return nil, activityError(err)
	}
	return plan, nil
}

// EnsureIssue gives ticket in.ItemID its issue, once: a link already
// recorded answers its key; otherwise the tracker is searched for an
// issue carrying the ticket's label (support.TrackerLabel), which is
// adopted when found (an earlier attempt created it and its answer was
// lost); only when there is none is the issue created. The link (and the
// ticket's metadata.vendor_ticket) is recorded before it returns.
func (a *Tracker) EnsureIssue(ctx context.Context, in workflows.TrackerRef) (*workflows.TrackerIssueResult, error) {
	c, cr, err := a.load(ctx, in)
	if err != nil || c == nil || !c.CreateIssues {
		return &workflows.TrackerIssueResult{}, err
	}
	scope := in.Scope()
	if l, err := a.store.TrackerLinkOf(ctx, scope, c.ID, in.ItemID); err == nil {
		return &workflows.TrackerIssueResult{Key: l.IssueKey, Adopted: l.Adopted}, nil
	} else if models.ErrorCode(err) != models.CodeNotFound {
		return nil, activityError(err)
	}
	t, err := a.store.TicketIn(ctx, scope, in.ItemID)
	if models.ErrorCode(err) == models.CodeNotFound {
		return &workflows.TrackerIssueResult{}, nil
	}
	if err != nil {
		return nil, activityError(err)
	}
	label := support.TrackerLabel(t.ID)
	found, err := a.client.SearchLabel(ctx, cr, c.ProjectKey, label)
	if err != nil {
		return nil, a.failed(ctx, c, "searching for the ticket's issue", err)
	}
	priority := c.PriorityMapping.For(t.Priority)
	var issue *tracker.Issue
	adopted := len(found) > 0
	if adopted {
		issue = &found[0]
	} else {
		issue, err = a.client.CreateIssue(ctx, cr, tracker.NewIssue{ProjectKey: c.ProjectKey, Summary: issueSummary(t),
			Description: a.issueDescription(t), Priority: priority, Labels: []string{label}})
		if err != nil {
			return nil, a.failed(ctx, c, "creating the ticket's issue", err)
		}
	}
	l, err := a.store.RecordTrackerLink(ctx, scope, support.TrackerLink{Tenant: t.Tenant, IntegrationID: c.ID, TicketID: t.ID,
		IssueKey: issue.Key, IssueID: issue.ID, Priority: priority, Adopted: adopted, RemoteStatus: issue.Status()})
	if err != nil {
		return nil, activityError(err)
	}
	a.succeeded(ctx, c)
	return &workflows.TrackerIssueResult{Key: l.IssueKey, Adopted: l.Adopted}, nil
}

// issueSummary is the summary of a ticket's issue: its number and title.
func issueSummary(t *support.Ticket) string {
	return models.Truncate(t.Number+": "+t.Title, maxTrackerSummary)
}

// issueDescription is the description of a ticket's issue: the ticket's
// description and where the ticket is.
func (a *Tracker) issueDescription(t *support.Ticket) string {
	var b strings.Builder
	if d := strings.TrimSpace(t.Description); d != "" {
		b.WriteString(d)
		b.WriteString("\n\n")
	}
	fmt.Fprintf(&b, "Support ticket %s (priority %s, category %s)", t.Number, t.Priority, t.Category)
	if a.baseURL != "" {
		fmt.Fprintf(&b, ": %s/portal/tickets/%s", a.baseURL, t.ID)
	}
	return b.String()
}

// PushComment posts customer-visible comment in.ItemID to its ticket's
// issue, once: a comment already posted or imported (marked) is left
// alone, internal comments are never posted, and before posting the
// issue's comments are searched for the comment's reference
// (support.TrackerCommentRef), adopting the one an earlier attempt posted.
// The mark is recorded before it returns.
func (a *Tracker) PushComment(ctx context.Context, in workflows.TrackerRef) error {
	c, cr, err := a.load(ctx, in)
	if err != nil || c == nil || !c.SyncComments {
		return err
	}
	scope := in.Scope()
	cm, err := a.store.CommentIn(ctx, scope, in.ItemID)
	if models.ErrorCode(err) == models.CodeNotFound {
		return nil
	}
	if err != nil {
		return activityError(err)
	}
	if cm.Visibility != support.VisibilityCustomer {
		return nil
	}
	if mark, err := a.store.TrackerCommentMark(ctx, scope, c.ID, cm.ID); err != nil || mark != "" {
		return activityError(err)
	}
	l, err := a.store.TrackerLinkOf(ctx, scope, c.ID, cm.TicketID)
	if models.ErrorCode(err) == models.CodeNotFound {
		return nil
	}
	if err != nil {
		return activityError(err)
	}
	ref := support.TrackerCommentRef(cm.ID)
	existing, err := a.client.Comments(ctx, cr, l.IssueKey, maxTrackerComments)
	if err != nil {
		return a.failed(ctx, c, "reading the issue's comments", err)
	}
	remoteID := ""
	for i := range existing {
		if strings.Contains(existing[i].Body, ref) {
			remoteID = existing[i].ID
			break
		}
	}
	if remoteID == "" {
		posted, err := a.client.AddComment(ctx, cr, l.IssueKey, commentBody(cm, ref))
		if err != nil {
			return a.failed(ctx, c, "posting a comment", err)
		}
		remoteID = posted.ID
	}
	if err := a.store.MarkTrackerComment(ctx, scope, c.ID, cm.TicketID, cm.ID, remoteID); err != nil {
		return activityError(err)
	}
	a.succeeded(ctx, c)
	return nil
}

// commentBody is the text of a comment posted to the tracker: who wrote
// it, what, and its reference.
func commentBody(cm *support.Comment, ref string) string {
	who := cm.AuthorName
	if who == "" {
		who = cm.AuthorType
	}
	return fmt.Sprintf("%s wrote:\n\n%s\n\n%s", who, cm.Content, ref)
}

// PollLink reads the issue of link in.ItemID: its status (stored on the
// link), its comments (each new one not ours imported onto the ticket
// once, when the integration syncs comments), and brings the issue's
// priority to the ticket's mapped one when the ticket's changed.
func (a *Tracker) PollLink(ctx context.Context, in workflows.TrackerRef) (*workflows.TrackerPollResult, error) {
	scope := in.Scope()
	l, err := a.store.TrackerLinkIn(ctx, scope, in.ItemID)
	if models.ErrorCode(err) == models.CodeNotFound {
		return &workflows.TrackerPollResult{}, nil
	}
	if err != nil {
		return nil, activityError(err)
	}
	c, cr, err := a.load(ctx, in)
	if err != nil || c == nil {
		return &workflows.TrackerPollResult{}, err
	}
	issue, err := a.client.GetIssue(ctx, cr, l.IssueKey)
	if err != nil {
		return nil, a.failed(ctx, c, "reading the issue", err)
	}
	out := &workflows.TrackerPollResult{Status: issue.Status()}
	if c.SyncComments {
		known, err := a.store.TrackerRemoteIDs(ctx, scope, c.ID, l.TicketID)
		if err != nil {
			return nil, activityError(err)
		}
		remote, err := a.client.Comments(ctx, cr, l.IssueKey, maxTrackerComments)
		if err != nil {
			return nil, a.failed(ctx, c, "reading the issue's comments", err)
		}
		for i := range remote {
			rc := &remote[i]
			if rc.ID == "" || known[rc.ID] {
				continue
			}
			added, err := a.store.ImportTrackerComment(ctx, scope, l, support.RemoteComment{ID: rc.ID, Author: rc.AuthorName(), Body: rc.Body})
			if err != nil {
				return nil, activityError(err)
			}
			if added {
				out.Imported++
			}
		}
	}
	if t, err := a.store.TicketIn(ctx, scope, l.TicketID); err == nil {
		if want := c.PriorityMapping.For(t.Priority); l.Priority != "" && want != l.Priority {
			if err := a.client.SetPriority(ctx, cr, l.IssueKey, want); err != nil {
				return nil, a.failed(ctx, c, "changing the issue's priority", err)
			}
			if err := a.store.SetTrackerLinkPriority(ctx, scope, l.ID, want); err != nil {
				return nil, activityError(err)
			}
		}
	}
	if err := a.store.SetTrackerLinkStatus(ctx, scope, l.ID, out.Status, c.SyncComments); err != nil {
		return nil, activityError(err)
	}
	a.succeeded(ctx, c)
	return out, nil
}
