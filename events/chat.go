package events

import (
	"context"
	"fmt"
	"net/netip"
	"net/url"
	"slices"
	"strings"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/eventlog"
	"github.com/telcoplatform/platform/models/support"
	"github.com/telcoplatform/platform/webhooks"
)

// ChatInput is what a client sends to create a support chat integration.
type ChatInput struct {
	WebhookURL string
	Channel    string
	Events     []string
	Filters    *eventlog.WebhookFilters
	Template   string // "" means support.DefaultChatTemplate
	Active     *bool  // nil: active
}

// checkChatURL checks a chat integration's webhook_url into v: the
// subscriptions' URL rules and SSRF guard (webhooks.ValidateURLWith), and
// https, or http to a loopback host where private targets are allowed.
// It returns errors other than VALIDATION_ERROR (DEPENDENCY_UNAVAILABLE).
func (s *Subscriptions) checkChatURL(ctx context.Context, v *models.Validator, raw string) error {
	if raw == "" {
		v.Add("webhook_url", "is required")
		return nil
	}
	var inner models.Validator
	if err := issues(&inner, webhooks.ValidateURLWith(ctx, s.resolver, raw, s.allowPrivate)); err != nil {
		return err
	}
	if err := inner.Err(); err != nil {
		for _, f := range fieldsOf(err) {
			v.Add("webhook_url", f.Issue)
		}
		return nil
	}
	u, _ := url.Parse(raw) // parsed by ValidateURLWith
	if u.Scheme == "http" && !(s.allowPrivate && loopbackHost(u.Hostname())) {
		v.Add("webhook_url", "must be an https URL (http only to a loopback host, where the platform allows private targets)")
	}
	return nil
}

// fieldsOf returns the field issues of a VALIDATION_ERROR.
func fieldsOf(err error) []models.FieldIssue {
	fs, _ := models.AsError(err).Details["fields"].([]models.FieldIssue)
	return fs
}

// loopbackHost reports whether host is localhost or a loopback address.
func loopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.IsLoopback()
}

// chatGroups are the event groups a chat integration may take: those
// about a ticket. Support report runs (report.*) are about no ticket, so
// a message about one would have nothing to render.
var chatGroups = []string{"ticket", "comment", "sla"}

// chatEvent reports whether a chat integration may receive events of type
// typ (a canonical name, or a group pattern such as "ticket.*").
func chatEvent(typ string) bool {
	g, _, _ := strings.Cut(typ, ".")
	return slices.Contains(chatGroups, g)
}

// chatEvents normalises a chat integration's event names and patterns
// into v: support events about tickets only (ticket.*, comment.*, sla.*);
// report events and other areas' are refused on events[i].
func chatEvents(v *models.Validator, evs []string) ([]string, error) {
	if len(evs) == 0 {
		v.Add("events", "at least one event name or pattern is required")
		return nil, nil
	}
	out := make([]string, 0, len(evs))
	for i, e := range evs {
		field := fmt.Sprintf("events[%d]", i)
		norm, err := webhooks.NormalizePatterns(webhooks.AreaSupport, []string{e})
		if err != nil {
			if models.ErrorCode(err) != models.CodeValidation {
				return nil, err
			}
			for _, f := range fieldsOf(err) {
				v.Add(field, strings.ReplaceAll(f.Issue, "a support subscription may only use ticket.*, comment.*, sla.*, report.*",
					"a chat integration may only use ticket.*, comment.*, sla.*"))
			}
			continue
		}
		if !chatEvent(norm[0]) {
			v.Add(field, fmt.Sprintf("%q is about no ticket; a chat integration may only use ticket.*, comment.*, sla.*", e))
			continue
		}
		if !slices.Contains(out, norm[0]) {
			out = append(out, norm[0])
		}
	}
	return out, nil
}

// ChatSpec checks a new chat integration's URL and events and returns it
// ready for support.Store.CreateChatIntegration (which checks the channel,
// the filters and the template). Errors: VALIDATION_ERROR naming every
// invalid field (webhook_url, events[i]); DEPENDENCY_UNAVAILABLE when the
// URL's host could not be resolved for a reason other than not existing.
func (s *Subscriptions) ChatSpec(ctx context.Context, in ChatInput) (support.ChatSpec, error) {
	var v models.Validator
	spec := support.ChatSpec{WebhookURL: in.WebhookURL, Channel: in.Channel, Template: in.Template, Active: true}
	if in.Active != nil {
		spec.Active = *in.Active
	}
	if in.Filters != nil {
		spec.Filters = *in.Filters
	}
	if err := s.checkChatURL(ctx, &v, in.WebhookURL); err != nil {
		return spec, err
	}
	if in.Events == nil {
		v.Add("events", "is required")
	} else {
		evs, err := chatEvents(&v, in.Events)
		if err != nil {
			return spec, err
		}
		spec.Events = evs
	}
	return spec, v.Err()
}

// ChatPatch checks the URL and events of a change to a chat integration
// and returns it with the events normalised. Errors: as ChatSpec.
func (s *Subscriptions) ChatPatch(ctx context.Context, in support.ChatPatch) (support.ChatPatch, error) {
	var v models.Validator
	if in.WebhookURL != nil {
		if err := s.checkChatURL(ctx, &v, *in.WebhookURL); err != nil {
			return in, err
		}
	}
	if in.Events != nil {
		evs, err := chatEvents(&v, in.Events)
		if err != nil {
			return in, err
		}
		in.Events = evs
	}
	return in, v.Err()
}

// MatchesChat reports whether chat integration c receives ev: the rules of
// a support subscription (Matches): same organization and environment,
// active, its patterns select ev's type and its filters hold.
func MatchesChat(c *support.ChatIntegration, ev *eventlog.Event) bool {
	return Matches(c.Subscription(), ev)
}

// chatTargets returns the subscription views of the chat integrations that
// receive ev (support events about tickets only: ticket.*, comment.*, sla.*,
// even for an integration stored with report events before they were refused).
func (d *Dispatcher) chatTargets(ctx context.Context, ev *eventlog.Event) ([]eventlog.WebhookSubscription, error) {
	if !supportEvent(ev.Type) || !chatEvent(ev.Type) {
		return nil, nil
	}
	chats, err := d.support.CandidateChatIntegrations(ctx, ev)
	if err != nil {
		return nil, err
	}
	var out []eventlog.WebhookSubscription
	for i := range chats {
		if MatchesChat(&chats[i], ev) {
			out = append(out, *chats[i].Subscription())
		}
	}
	return out, nil
}
