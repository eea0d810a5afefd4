// Package events is the platform's event delivery: the rules of webhook
// subscriptions (areas, patterns, filters, secrets, URLs), which
// subscriptions receive an event, the body each receives, and the
// Dispatcher that hands committed outbox events to one delivery workflow
// per (event, subscription). docs/webhooks.md describes the behaviour.
package events

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"slices"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/eventlog"
	"github.com/telcoplatform/platform/webhooks"
)

// Area returns the webhooks area of a subscription area name ("all",
// "services", "billing", "support").
func Area(name string) webhooks.Area {
	switch name {
	case eventlog.WebhookAreaServices:
		return webhooks.AreaServices
	case eventlog.WebhookAreaBilling:
		return webhooks.AreaBilling
	case eventlog.WebhookAreaSupport:
		return webhooks.AreaSupport
	}
	return webhooks.AreaAll
}

// AreaName returns the stored name of an area ("all" for AreaAll).
func AreaName(a webhooks.Area) string {
	if a == webhooks.AreaAll {
		return eventlog.WebhookAreaAll
	}
	return string(a)
}

// SubscriptionInput is what a client sends to create a subscription.
type SubscriptionInput struct {
	URL              string
	Description      string
	Events           []string
	Filters          *eventlog.WebhookFilters
	Secret           string // "" to have one generated
	Active           *bool  // nil: active
	AllOrganizations bool
}

// PatchInput is a change to a subscription; nil fields stay as they are.
type PatchInput struct {
	URL         *string
	Description *string
	Events      []string
	Filters     *eventlog.WebhookFilters
	Active      *bool
}

// Subscriptions checks subscription input: URLs (with the SSRF guard, so
// hosts resolving to non-public addresses are refused unless allowPrivate),
// event names and patterns within the endpoint's area, filters and secrets.
type Subscriptions struct {
	allowPrivate bool
	resolver     webhooks.Resolver
}

// NewSubscriptions returns the rules; allowPrivate is WEBHOOK_ALLOW_PRIVATE,
// resolver nil means net.DefaultResolver.
func NewSubscriptions(allowPrivate bool, resolver webhooks.Resolver) *Subscriptions {
	if resolver == nil {
		resolver = net.DefaultResolver
	}
	return &Subscriptions{allowPrivate: allowPrivate, resolver: resolver}
}

// issues collects the field issues of a VALIDATION_ERROR, or returns any
// other error as it is.
func issues(v *models.Validator, err error) error {
	if err == nil {
		return nil
	}
	var e *models.Error
	if errors.As(err, &e) && e.Code == models.CodeValidation {
		if fs, ok := e.Details["fields"].([]models.FieldIssue); ok {
			for _, f := range fs {
				v.Add(f.Field, f.Issue)
			}
			return nil
		}
	}
	return err
}

// checkFilters refuses filters on an area whose events they cannot apply to.
func checkFilters(v *models.Validator, area webhooks.Area, f *eventlog.WebhookFilters) {
	if f == nil || (len(f.CustomerIDs) == 0 && len(f.Priorities) == 0) {
		return
	}
	if area == webhooks.AreaServices || area == webhooks.AreaBilling {
		v.Add("filters", "filters apply to support events (ticket.*, comment.*, sla.*); a "+string(area)+" subscription cannot have them")
	}
}

// Spec checks a new subscription created through area and returns it ready
// to store, with its secret (the one given, or a generated one).
// Errors: VALIDATION_ERROR naming every invalid field (url, events[i],
// secret, filters); DEPENDENCY_UNAVAILABLE when the URL's host could not
// be resolved for a reason other than not existing.
func (s *Subscriptions) Spec(ctx context.Context, area webhooks.Area, in SubscriptionInput) (eventlog.WebhookSpec, error) {
	var v models.Validator
	spec := eventlog.WebhookSpec{Area: AreaName(area), URL: in.URL, Description: in.Description, Active: true, AllOrganizations: in.AllOrganizations}
	if in.Active != nil {
		spec.Active = *in.Active
	}
	if in.URL == "" {
		v.Add("url", "is required")
	} else if err := issues(&v, webhooks.ValidateURLWith(ctx, s.resolver, in.URL, s.allowPrivate)); err != nil {
		return spec, err
	}
	if in.Events == nil {
		v.Add("events", "is required")
	} else {
		evs, err := webhooks.NormalizePatterns(area, in.Events)
		if err := issues(&v, err); err != nil {
			return spec, err
		}
		spec.Events = evs
	}
	spec.Secret = in.Secret
	if spec.Secret == "" {
		spec.Secret = webhooks.NewSecret()
	} else if err := issues(&v, webhooks.ValidateSecret(in.Secret)); err != nil {
		return spec, err
	}
	checkFilters(&v, area, in.Filters)
	if in.Filters != nil {
		spec.CustomerIDs, spec.Priorities = in.Filters.CustomerIDs, in.Filters.Priorities
	}
	return spec, v.Err()
}

// Patch checks a change to sub (its events must stay within sub's area).
// Errors: as Spec.
func (s *Subscriptions) Patch(ctx context.Context, sub *eventlog.WebhookSubscription, in PatchInput) (eventlog.WebhookPatch, error) {
	var v models.Validator
	area := Area(sub.Area)
	out := eventlog.WebhookPatch{URL: in.URL, Description: in.Description, Filters: in.Filters, Active: in.Active}
	if in.URL != nil {
		if err := issues(&v, webhooks.ValidateURLWith(ctx, s.resolver, *in.URL, s.allowPrivate)); err != nil {
			return out, err
		}
	}
	if in.Events != nil {
		evs, err := webhooks.NormalizePatterns(area, in.Events)
		if err := issues(&v, err); err != nil {
			return out, err
		}
		out.Events = evs
	}
	checkFilters(&v, area, in.Filters)
	return out, v.Err()
}

// Secret returns the secret for a rotation: secret when it is valid, a new
// one when it is "". Errors: VALIDATION_ERROR (field secret).
func Secret(secret string) (string, error) {
	if secret == "" {
		return webhooks.NewSecret(), nil
	}
	if err := webhooks.ValidateSecret(secret); err != nil {
		return "", err
	}
	return secret, nil
}

// supportEvent reports whether an event belongs to the support area, the
// only one that filters apply to.
func supportEvent(typ string) bool { return webhooks.AreaOf(typ) == webhooks.AreaSupport }

// stringAt returns data[key], or data[outer][key] for each outer object
// given, when it is a string.
func stringAt(data map[string]any, key string, outer ...string) (string, bool) {
	if v, ok := data[key].(string); ok {
		return v, true
	}
	for _, o := range outer {
		if m, ok := data[o].(map[string]any); ok {
			if v, ok := m[key].(string); ok {
				return v, true
			}
		}
	}
	return "", false
}

// Matches reports whether sub receives ev: tenancy allows it
// (models.SubscriptionMayReceive), sub is active, its patterns select ev's
// type, and, for support events, its filters hold: customer_ids and
// priorities are compared with the event data's customer_id and priority
// (at the top level or in its ticket object); an event without the field
// does not pass a filter on it. webhook.test never matches (it is sent to
// one subscription directly).
func Matches(sub *eventlog.WebhookSubscription, ev *eventlog.Event) bool {
	if !sub.Active || !eventlog.SubscriptionMayReceive(sub, ev) || !webhooks.Matches(sub.Events, ev.Type) {
		return false
	}
	if !supportEvent(ev.Type) {
		return true
	}
	if len(sub.CustomerIDs) > 0 {
		c, ok := stringAt(ev.Data, "customer_id", "ticket")
		if !ok || !slices.Contains(sub.CustomerIDs, c) {
			return false
		}
	}
	if len(sub.Priorities) > 0 {
		p, ok := stringAt(ev.Data, "priority", "ticket")
		if !ok || !slices.Contains(sub.Priorities, p) {
			return false
		}
	}
	return true
}

// Body returns the JSON body that sub receives for ev:
// {"id", "event", "timestamp", "data"} (webhooks.Payload; timestamp is
// when the event happened), plus "organization_id" for provider staff
// subscriptions across organizations. Errors: VALIDATION_ERROR (unknown
// event type), INTERNAL_ERROR.
func Body(ev *eventlog.Event, sub *eventlog.WebhookSubscription) ([]byte, error) {
	body, err := webhooks.Payload(ev.ID, ev.Type, ev.CreatedAt, ev.Data)
	if err != nil || !sub.AllOrganizations {
		return body, err
	}
	var parts struct {
		ID        string          `json:"id"`
		Event     string          `json:"event"`
		Timestamp string          `json:"timestamp"`
		Data      json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(body, &parts); err != nil {
		return nil, models.Internal(fmt.Errorf("events: re-reading a payload: %w", err))
	}
	return json.Marshal(struct {
		ID             string          `json:"id"`
		Event          string          `json:"event"`
		Timestamp      string          `json:"timestamp"`
		OrganizationID string          `json:"organization_id"`
		Data           json.RawMessage `json:"data"`
	}{parts.ID, parts.Event, parts.Timestamp, ev.OrganizationID, parts.Data})
}

// ReadableGroups returns the event groups p may read in the event log: all
// of them (nil) with webhooks:manage; otherwise service with services:read,
// invoice, payment, subscription and usage with billing:read, ticket,
// comment and sla with support:read. Errors: INSUFFICIENT_PERMISSIONS when
// p holds none of these permissions.
func ReadableGroups(p *models.Principal) ([]string, error) {
	if p.Can("webhooks:manage") {
		return nil, nil
	}
	var groups []string
	if p.Can("services:read") {
		groups = append(groups, "service")
	}
	if p.Can("billing:read") {
		groups = append(groups, "invoice", "payment", "subscription", "usage")
	}
	if p.Can("support:read") {
		groups = append(groups, "ticket", "comment", "sla")
	}
	if len(groups) == 0 {
		return nil, models.Errorf(models.CodeInsufficientPermissions,
			"reading events needs webhooks:manage, services:read, billing:read or support:read").
			WithDetail("required_permission", []string{"webhooks:manage", "services:read", "billing:read", "support:read"})
	}
	return groups, nil
}

// TypeFilter turns the `type` query parameter (a canonical name, an alias,
// or a group pattern such as "service.*") into a models.EventFilter's Types
// or Groups. Errors: VALIDATION_ERROR (field type).
func TypeFilter(f *eventlog.EventFilter, typ string) error {
	if typ == "" {
		return nil
	}
	if typ == eventlog.EventWebhookTest {
		f.Types = []string{typ}
		return nil
	}
	norm, err := webhooks.NormalizePatterns(webhooks.AreaAll, []string{typ})
	if err != nil || norm[0] == webhooks.PatternAll {
		if typ == webhooks.PatternAll {
			return nil
		}
		return models.Invalid(models.FieldIssue{Field: "type", Issue: fmt.Sprintf("%q is not an event name or a group pattern such as service.*", typ)})
	}
	if g, ok := cutGroup(norm[0]); ok {
		f.Groups = []string{g}
	} else {
		f.Types = []string{norm[0]}
	}
	return nil
}

// cutGroup returns the group of a "group.*" pattern.
func cutGroup(p string) (string, bool) {
	if len(p) > 2 && p[len(p)-2:] == ".*" {
		return p[:len(p)-2], true
	}
	return "", false
}
