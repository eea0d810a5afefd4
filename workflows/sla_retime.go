package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/telcoplatform/platform/models/support"
)

// SLARetimeWorkflow is the registered name of the workflow that tells the
// SLA workflows of the open tickets an edit of SLA policies or calendars
// affects to sync (and so re-time) now.
const SLARetimeWorkflow = "SLARetime"

// SLARetimeInput is the argument of SLARetime: the scope of the edit and
// where the last page ended (continue-as-new carries it).
type SLARetimeInput struct {
	Scope    support.RetimeScope `json:"scope"`
	After    string              `json:"after,omitempty"`
	Signaled int                 `json:"signaled,omitempty"`
}

// SLARetimePage is the argument of the activity listing a page of tickets.
type SLARetimePage struct {
	Scope support.RetimeScope `json:"scope"`
	After string              `json:"after,omitempty"`
}

// slaRetimePagesPerRun is how many pages a run signals before it continues
// as new (bounded history).
const slaRetimePagesPerRun = 20

// SLARetime pages through the affected open tickets (Support.RetimeCandidates)
// and signals each one's TicketSLA workflow (TicketSLASignal), so that a
// policy or calendar edit reaches every open ticket at once rather than
// when the ticket is next touched. A ticket whose workflow is not running
// is skipped (its clocks re-time at its next change). It returns how many
// workflows it signalled.
func SLARetime(ctx workflow.Context, in SLARetimeInput) (int, error) {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: 2 * time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute},
	})
	for page := 0; page < slaRetimePagesPerRun; page++ {
		var ids []string
		if err := call(summarized(actx, fmt.Sprintf("find tickets to re-time after %q, page %d", in.After, page)), SupportActivities.RetimeCandidates, SLARetimePage{Scope: in.Scope, After: in.After}).Get(ctx, &ids); err != nil {
			return in.Signaled, err
		}
		futures := make([]workflow.Future, 0, len(ids))
		for _, id := range ids {
			futures = append(futures, workflow.SignalExternalWorkflow(ctx, TicketSLAID(id), "", TicketSLASignal, nil))
		}
		for _, f := range futures {
			if f.Get(ctx, nil) == nil {
				in.Signaled++
			}
		}
		if len(ids) < support.MaxRetimePage {
			return in.Signaled, nil
		}
		in.After = ids[len(ids)-1]
	}
	return in.Signaled, workflow.NewContinueAsNewError(ctx, SLARetimeWorkflow, in)
}
