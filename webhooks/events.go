// Package webhooks is the transport layer of webhook delivery: Standard
// Webhooks secrets and signatures, the catalogue of event names and
// subscription patterns, the SSRF guard for subscriber URLs, one signed
// delivery attempt over HTTP, the JSON body of a delivery, and the retry
// schedule that the delivery workflow follows.
//
// It holds no state of its own: subscriptions, the outbox and the delivery
// workflow are built on top of it elsewhere.
package webhooks

import (
	"fmt"
	"strings"

	"github.com/telcoplatform/platform/models"
)

// Area is a part of the platform whose subscription endpoint may only
// subscribe to its own event groups.
type Area string

// The areas. AreaAll ("") is the cross-area endpoint /v1/webhooks.
const (
	AreaAll      Area = ""         // every area
	AreaServices Area = "services" // service.*
	AreaBilling  Area = "billing"  // invoice.*, payment.*, subscription.*, usage.*
	AreaSupport  Area = "support"  // ticket.*, comment.*, sla.*, report.*
	// AreaAnalytics has no endpoint of its own: its events are subscribed
	// to through /v1/webhooks.
	AreaAnalytics Area = "analytics" // analytics_report.*
)

// Canonical event names (DECISIONS 9). Deliveries always carry these names.
const (
	EventServiceProvisioned          = "service.provisioned"
	EventServiceModified             = "service.modified"
	EventServiceDown                 = "service.down"
	EventServiceRestored             = "service.restored"
	EventServicePerformanceAlert     = "service.performance_alert"
	EventServiceMaintenanceScheduled = "service.maintenance_scheduled"
	EventServiceDecommissioned       = "service.decommissioned"
	EventServiceStatusChanged        = "service.status_changed"

	EventInvoiceCreated        = "invoice.created"
	EventInvoicePaid           = "invoice.paid"
	EventInvoiceOverdue        = "invoice.overdue"
	EventInvoiceCancelled      = "invoice.cancelled"
	EventInvoiceDisputed       = "invoice.disputed"
	EventPaymentSuccessful     = "payment.successful"
	EventPaymentFailed         = "payment.failed"
	EventSubscriptionCreated   = "subscription.created"
	EventSubscriptionCancelled = "subscription.cancelled"
	EventUsageThreshold        = "usage.threshold"

	EventTicketCreated   = "ticket.created"
	EventTicketUpdated   = "ticket.updated"
	EventTicketResolved  = "ticket.resolved"
	EventTicketEscalated = "ticket.escalated"
	EventCommentAdded    = "comment.added"
	EventSLABreach       = "sla.breach"
	// EventSLACreditIssued is written by billing when a breached SLA target
	// earns a service credit; in the sla group, so in the support area.
	EventSLACreditIssued = "sla.credit_issued"
	// EventReportCompleted and EventReportFailed end a support report run;
	// in the report group, so in the support area.
	EventReportCompleted = "report.completed"
	EventReportFailed    = "report.failed"
	// EventAnalyticsReportCompleted and EventAnalyticsReportFailed end an
	// analytics report builder run; in the analytics area.
	EventAnalyticsReportCompleted = "analytics_report.completed"
	EventAnalyticsReportFailed    = "analytics_report.failed"

	// EventTest is the ping sent by POST /v1/webhooks/{id}/test. It is not
	// subscribable: the test endpoint sends it to the one subscription being
	// tested whatever its patterns, so it is absent from EventNames and
	// refused by NormalizePatterns, and Matches never reports it.
	EventTest = "webhook.test"
)

// Aliases accepted in subscriptions and by Canonical (DECISIONS 9).
const (
	AliasInvoiceGenerated = "invoice.generated" // means invoice.created
	AliasPaymentReceived  = "payment.received"  // means payment.successful
)

// PatternAll is the pattern that matches every subscribable event.
const PatternAll = "*"

// subscribable returns the canonical subscribable names, grouped by area. It
// returns an array (a value), so the catalogue is constant, not shared state.
func subscribable() [29]string {
	return [29]string{
		EventServiceProvisioned, EventServiceModified, EventServiceDown, EventServiceRestored,
		EventServicePerformanceAlert, EventServiceMaintenanceScheduled, EventServiceDecommissioned,
		EventServiceStatusChanged,
		EventInvoiceCreated, EventInvoicePaid, EventInvoiceOverdue, EventInvoiceCancelled, EventInvoiceDisputed, EventPaymentSuccessful,
		EventPaymentFailed, EventSubscriptionCreated, EventSubscriptionCancelled, EventUsageThreshold,
		EventTicketCreated, EventTicketUpdated, EventTicketResolved, EventTicketEscalated,
		EventCommentAdded, EventSLABreach, EventSLACreditIssued, EventReportCompleted, EventReportFailed,
		EventAnalyticsReportCompleted, EventAnalyticsReportFailed,
	}
}

// EventNames returns the canonical subscribable event names, services first,
// then billing, then support, then analytics (a new slice on every call). It does not
// contain the aliases or EventTest.
func EventNames() []string {
	all := subscribable()
	return append([]string(nil), all[:]...)
}

// isSubscribable reports whether name is a canonical subscribable event.
func isSubscribable(name string) bool {
	for _, n := range subscribable() {
		if n == name {
			return true
		}
	}
	return false
}

// Canonical returns the canonical name of an event name or alias
// (invoice.generated → invoice.created, payment.received →
// payment.successful) and true, or "" and false for an unknown name.
// EventTest is known and is its own canonical name.
func Canonical(name string) (string, bool) {
	switch name {
	case AliasInvoiceGenerated:
		return EventInvoiceCreated, true
	case AliasPaymentReceived:
		return EventPaymentSuccessful, true
	case EventTest:
		return EventTest, true
	}
	if isSubscribable(name) {
		return name, true
	}
	return "", false
}

// groupArea returns the area of an event group (the part of a name before
// the first dot).
func groupArea(group string) (Area, bool) {
	switch group {
	case "service":
		return AreaServices, true
	case "invoice", "payment", "subscription", "usage":
		return AreaBilling, true
	case "ticket", "comment", "sla", "report":
		return AreaSupport, true
	case "analytics_report":
		return AreaAnalytics, true
	}
	return "", false
}

// group returns the part of name before the first dot.
func group(name string) string {
	g, _, _ := strings.Cut(name, ".")
	return g
}

// AreaOf returns the area of a subscribable event name or alias, or
// AreaAll ("") for EventTest and unknown names.
func AreaOf(event string) Area {
	c, ok := Canonical(event)
	if !ok || c == EventTest {
		return AreaAll
	}
	a, _ := groupArea(group(c))
	return a
}

// validArea reports whether a is one of the defined areas.
func validArea(a Area) bool {
	switch a {
	case AreaAll, AreaServices, AreaBilling, AreaSupport, AreaAnalytics:
		return true
	}
	return false
}

// NormalizePatterns checks the event names and patterns of a subscription
// created through area (AreaAll for the cross-area /v1/webhooks) and returns
// them canonicalised (aliases replaced by canonical names), without
// duplicates, in their first-seen order.
//
// Accepted entries are canonical names and aliases, group patterns
// ("service.*", "invoice.*", "payment.*", "subscription.*", "usage.*",
// "ticket.*", "comment.*", "sla.*", "report.*") and "*". For an area other than AreaAll
// every entry must belong to that area, so "*" (which covers every area) is
// refused there. EventTest is not subscribable.
//
// Errors are VALIDATION_ERROR (*models.Error): field "events" when the list
// is empty, "events[i]" for each unknown or out-of-area entry, "area" when
// area is not one of the defined areas.
func NormalizePatterns(area Area, patterns []string) ([]string, error) {
	if !validArea(area) {
		return nil, models.Invalid(models.FieldIssue{Field: "area", Issue: fmt.Sprintf("unknown area %q", area)})
	}
	if len(patterns) == 0 {
		return nil, models.Invalid(models.FieldIssue{Field: "events", Issue: "at least one event name or pattern is required"})
	}
	var v models.Validator
	out := make([]string, 0, len(patterns))
	seen := make(map[string]bool, len(patterns))
	for i, p := range patterns {
		field := fmt.Sprintf("events[%d]", i)
		norm, issue := normalizeOne(area, p)
		if issue != "" {
			v.Add(field, issue)
			continue
		}
		if !seen[norm] {
			seen[norm] = true
			out = append(out, norm)
		}
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// normalizeOne returns the canonical form of one entry, or an issue.
func normalizeOne(area Area, p string) (string, string) {
	if p == PatternAll {
		if area != AreaAll {
			return "", fmt.Sprintf("%q covers every area; a %s subscription may only use %s", p, area, areaGroups(area))
		}
		return p, ""
	}
	if g, ok := strings.CutSuffix(p, ".*"); ok {
		a, known := groupArea(g)
		if !known {
			return "", fmt.Sprintf("unknown event group %q", g)
		}
		if area != AreaAll && a != area {
			return "", fmt.Sprintf("%q belongs to the %s area; a %s subscription may only use %s", p, a, area, areaGroups(area))
		}
		return p, ""
	}
	c, ok := Canonical(p)
	if !ok || c == EventTest {
		return "", fmt.Sprintf("unknown event %q", p)
	}
	if a := AreaOf(c); area != AreaAll && a != area {
		return "", fmt.Sprintf("%q belongs to the %s area; a %s subscription may only use %s", p, a, area, areaGroups(area))
	}
	return c, ""
}

// areaGroups returns the group patterns of an area, for error messages.
func areaGroups(a Area) string {
	switch a {
	case AreaServices:
		return "service.*"
	case AreaBilling:
		return "invoice.*, payment.*, subscription.*, usage.*"
	case AreaSupport:
		return "ticket.*, comment.*, sla.*, report.*"
	case AreaAnalytics:
		return "analytics_report.*"
	}
	return "*"
}

// Matches reports whether a subscription with these patterns (as returned
// by NormalizePatterns; aliases are also understood) receives event (a
// canonical name or alias). Unknown events and EventTest never match.
func Matches(patterns []string, event string) bool {
	ev, ok := Canonical(event)
	if !ok || ev == EventTest {
		return false
	}
	g := group(ev)
	for _, p := range patterns {
		if p == PatternAll {
			return true
		}
		if pg, ok := strings.CutSuffix(p, ".*"); ok {
			if pg == g {
				return true
			}
			continue
		}
		if c, ok := Canonical(p); ok && c == ev {
			return true
		}
	}
	return false
}
