package support

import (
	"slices"

	"github.com/telcoplatform/platform/models"
)

// Ticket statuses.
const (
	StatusOpen       = "open"
	StatusInProgress = "in_progress"
	StatusPending    = "pending" // waiting on the customer
	StatusEscalated  = "escalated"
	StatusResolved   = "resolved"
	StatusClosed     = "closed"
)

// Statuses returns every ticket status, in lifecycle order.
func Statuses() []string {
	return []string{StatusOpen, StatusInProgress, StatusPending, StatusEscalated, StatusResolved, StatusClosed}
}

// transitions is THE table of the ticket lifecycle: for each status, the
// statuses a ticket may move to. Staying in the same status is not a move.
// docs/support.md shows the same table.
var transitions = map[string][]string{
	StatusOpen:       {StatusInProgress, StatusPending, StatusEscalated, StatusResolved, StatusClosed},
	StatusInProgress: {StatusPending, StatusEscalated, StatusResolved, StatusClosed},
	StatusPending:    {StatusOpen, StatusInProgress, StatusEscalated, StatusResolved, StatusClosed},
	StatusEscalated:  {StatusInProgress, StatusPending, StatusResolved, StatusClosed},
	StatusResolved:   {StatusOpen, StatusInProgress, StatusClosed},
	StatusClosed:     {},
}

// AllowedTransitions returns the statuses a ticket in status from may move to.
func AllowedTransitions(from string) []string { return slices.Clone(transitions[from]) }

// CanTransition reports whether a ticket may move from one status to another.
func CanTransition(from, to string) bool { return slices.Contains(transitions[from], to) }

// checkTransition returns INVALID_STATE_TRANSITION, with details from, to
// and allowed, when the move is not in the table.
func checkTransition(ticketID, from, to string) error {
	if CanTransition(from, to) {
		return nil
	}
	allowed := AllowedTransitions(from)
	return models.Errorf(models.CodeInvalidStateTransition, "ticket %s cannot move from %s to %s", ticketID, from, to).
		WithDetail("from", from).WithDetail("to", to).WithDetail("allowed", allowed)
}

// customerMoves returns the statuses a customer may move their own ticket
// to from status from: reopen a resolved one (open), or close it (closed),
// where the table allows it.
func customerMoves(from string) []string {
	out := []string{}
	if from == StatusResolved && CanTransition(from, StatusOpen) {
		out = append(out, StatusOpen)
	}
	if CanTransition(from, StatusClosed) {
		out = append(out, StatusClosed)
	}
	return out
}

// customerMayMove reports whether a customer may move their own ticket
// from one status to another.
func customerMayMove(from, to string) bool { return slices.Contains(customerMoves(from), to) }
