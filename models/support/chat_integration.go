package support

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"gorm.io/gorm"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/eventlog"
)

// PrefixChatIntegration starts the id of a chat integration (chat_).
const PrefixChatIntegration = "chat"

// ChatIntegrationType is the type of the chat integrations this file keeps.
const ChatIntegrationType = "chatapp"

// Bounds of a chat integration's fields.
const (
	MaxChatChannel      = 80
	MaxChatTemplate     = 2000
	MaxChatText         = 4000
	MaxChatsPerTenant   = 20
	DefaultChatTemplate = "[{{ticket.priority}}] {{ticket.number}} {{ticket.title}} — {{event}}"
)

// chatPlaceholders are the fields a message template may name, in the
// order docs/support.md lists them.
var chatPlaceholders = []string{
	"event", "ticket.id", "ticket.number", "ticket.title", "ticket.status", "ticket.priority",
	"ticket.escalation_level", "ticket.escalation_reason", "ticket.customer_id", "ticket.url",
	"sla.metric", "sla.target", "sla.due_at", "comment.content", "comment.author_type",
}

// ChatPlaceholders returns the placeholders a message template may use.
func ChatPlaceholders() []string { return append([]string(nil), chatPlaceholders...) }

// ChatIntegration posts a chat message to a chat application's incoming
// webhook (chat_) for each support event of its organization and
// environment that its events and filters select. Its deliveries are
// webhook deliveries of kind chat (eventlog.DeliveryToChat).
type ChatIntegration struct {
	ID string `gorm:"primaryKey;size:40"`
	models.Tenant
	WebhookURL  string    `gorm:"size:2000;not null"`
	Channel     string    `gorm:"size:80;not null"`
	Events      []string  `gorm:"serializer:json;type:text;not null"`
	CustomerIDs []string  `gorm:"serializer:json;type:text"`
	Priorities  []string  `gorm:"serializer:json;type:text"`
	Template    string    `gorm:"type:text;not null"`
	Active      bool      `gorm:"not null;index"`
	CreatedBy   string    `gorm:"size:40"`
	CreatedAt   time.Time `gorm:"not null;index"`
	UpdatedAt   time.Time
}

// TableName is the chat integrations table.
func (ChatIntegration) TableName() string { return "support_chat_integrations" }

// Subscription returns the integration as the webhook subscription it
// behaves like (support area, same tenant, events and filters), so the
// subscription rules (events.Matches) decide which events it receives.
func (c *ChatIntegration) Subscription() *eventlog.WebhookSubscription {
	return &eventlog.WebhookSubscription{ID: c.ID, Tenant: c.Tenant, Area: eventlog.WebhookAreaSupport, URL: c.WebhookURL,
		Events: c.Events, CustomerIDs: c.CustomerIDs, Priorities: c.Priorities, Active: c.Active, CreatedAt: c.CreatedAt}
}

// ChatSpec is a chat integration to create; its URL and event patterns
// are already checked (events.ChatRules), the store checks the rest.
type ChatSpec struct {
	WebhookURL string
	Channel    string
	Events     []string
	Filters    eventlog.WebhookFilters
	Template   string // "" means DefaultChatTemplate
	Active     bool
}

// ChatPatch is a change to a chat integration; nil fields stay as they are.
type ChatPatch struct {
	WebhookURL *string
	Channel    *string
	Events     []string
	Filters    *eventlog.WebhookFilters
	Template   *string
	Active     *bool
}

// checkChannel validates a channel name into v.
func checkChannel(v *models.Validator, ch string) {
	n := utf8.RuneCountInString(strings.TrimSpace(ch))
	v.Check(n >= 1 && n <= MaxChatChannel, "channel", "must be 1 to 80 characters")
}

// ValidateChatTemplate checks a message template: at most 2000 characters,
// not blank, every {{ opened is closed by }} before the next one opens, no
// }} outside a placeholder, and every placeholder one of
// ChatPlaceholders. Errors: VALIDATION_ERROR on message_format.template
// naming the first problem.
func ValidateChatTemplate(tpl string) error {
	const field = "message_format.template"
	if strings.TrimSpace(tpl) == "" {
		return models.Invalid(models.FieldIssue{Field: field, Issue: "must not be blank"})
	}
	if utf8.RuneCountInString(tpl) > MaxChatTemplate {
		return models.Invalid(models.FieldIssue{Field: field, Issue: "must be at most 2000 characters"})
	}
	_, err := parseTemplate(tpl)
	return err
}

// templatePart is a literal text or (Name set) a placeholder.
type templatePart struct {
	Text, Name string
}

// parseTemplate splits tpl into literals and placeholders.
// Errors: VALIDATION_ERROR (message_format.template).
func parseTemplate(tpl string) ([]templatePart, error) {
	const field = "message_format.template"
	var parts []templatePart
	rest := tpl
	for rest != "" {
		open := strings.Index(rest, "{{")
		closing := strings.Index(rest, "}}")
		if open < 0 {
			if closing >= 0 {
				return nil, models.Invalid(models.FieldIssue{Field: field, Issue: fmt.Sprintf("unbalanced braces: }} at offset %d closes no {{", len(tpl)-len(rest)+closing)})
			}
			parts = append(parts, templatePart{Text: rest})
			break
		}
		if closing >= 0 && closing < open {
			return nil, models.Invalid(models.FieldIssue{Field: field, Issue: fmt.Sprintf("unbalanced braces: }} at offset %d closes no {{", len(tpl)-len(rest)+closing)})
		}
		if open > 0 {
			parts = append(parts, templatePart{Text: rest[:open]})
		}
		inner := rest[open+2:]
		end := strings.Index(inner, "}}")
		if end < 0 || strings.Contains(inner[:end], "{{") {
			return nil, models.Invalid(models.FieldIssue{Field: field, Issue: fmt.Sprintf("unbalanced braces: {{ at offset %d is not closed by }}", len(tpl)-len(rest)+open)})
		}
		name := strings.TrimSpace(inner[:end])
		if !isPlaceholder(name) {
			return nil, models.Invalid(models.FieldIssue{Field: field, Issue: fmt.Sprintf("unknown placeholder {{%s}}; use one of %s", name, strings.Join(chatPlaceholders, ", "))})
		}
		parts = append(parts, templatePart{Name: name})
		rest = inner[end+2:]
	}
	return parts, nil
}

// isPlaceholder reports whether name is one of chatPlaceholders.
func isPlaceholder(name string) bool {
	for _, p := range chatPlaceholders {
		if p == name {
			return true
		}
	}
	return false
}

// RenderChatTemplate fills a template's placeholders from fields (a
// missing field renders empty) and cuts the text to MaxChatText bytes. An
// invalid template (which registration refuses) renders as it is.
func RenderChatTemplate(tpl string, fields map[string]string) string {
	parts, err := parseTemplate(tpl)
	if err != nil {
		return tpl
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Name != "" {
			b.WriteString(fields[p.Name])
		} else {
			b.WriteString(p.Text)
		}
	}
	out := b.String()
	if len(out) > MaxChatText {
		n := MaxChatText
		for n > 0 && !utf8.RuneStart(out[n]) {
			n--
		}
		out = out[:n]
	}
	return out
}

// fieldString formats an event data value for a message ("" for null).
func fieldString(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case float64:
		if x == float64(int64(x)) {
			return fmt.Sprint(int64(x))
		}
	}
	return fmt.Sprint(v)
}

// ChatFields returns the placeholder values of an event: event, and
// ticket.*, sla.*, comment.* from the event data's ticket, sla and comment
// objects; ticket.url is the ticket's page in the customer portal under
// baseURL.
func ChatFields(evType string, data map[string]any, baseURL string) map[string]string {
	out := map[string]string{"event": evType}
	for _, obj := range []string{"ticket", "sla", "comment"} {
		m, _ := data[obj].(map[string]any)
		for k, v := range m {
			out[obj+"."+k] = fieldString(v)
		}
	}
	if id := out["ticket.id"]; id != "" {
		out["ticket.url"] = strings.TrimRight(baseURL, "/") + "/portal/tickets/" + id
	}
	return out
}

// ChatTicketRef is the ticket a chat message is about.
type ChatTicketRef struct {
	ID     string `json:"id"`
	Number string `json:"number"`
	URL    string `json:"url"`
}

// ChatMessage is the JSON body posted to a chat integration's URL.
type ChatMessage struct {
	Channel string        `json:"channel"`
	Text    string        `json:"text"`
	Event   string        `json:"event"`
	Ticket  ChatTicketRef `json:"ticket"`
	SentAt  string        `json:"sent_at"`
}

// ChatMessageBody renders the message c posts for an event of type evType
// with data, sent at sentAt. Errors: INTERNAL_ERROR.
func ChatMessageBody(c *ChatIntegration, evType string, data map[string]any, baseURL string, sentAt time.Time) ([]byte, error) {
	f := ChatFields(evType, data, baseURL)
	msg := ChatMessage{Channel: c.Channel, Text: RenderChatTemplate(c.Template, f), Event: evType,
		Ticket: ChatTicketRef{ID: f["ticket.id"], Number: f["ticket.number"], URL: f["ticket.url"]}, SentAt: models.Timestamp(sentAt)}
	b, err := json.Marshal(msg)
	if err != nil {
		return nil, models.Internal(err)
	}
	return b, nil
}

// checkChatSpec validates the fields the store owns into v.
func checkChatSpec(v *models.Validator, channel *string, f *eventlog.WebhookFilters, tpl *string) {
	if channel != nil {
		checkChannel(v, *channel)
	}
	if f != nil {
		eventlog.CheckWebhookFilters(v, *f)
	}
	if tpl != nil {
		if err := ValidateChatTemplate(*tpl); err != nil {
			fs, _ := models.AsError(err).Details["fields"].([]models.FieldIssue)
			for _, fi := range fs {
				v.Add(fi.Field, fi.Issue)
			}
		}
	}
}

// CreateChatIntegration stores a chat integration for p's own
// organization and environment (at most MaxChatsPerTenant of them).
// Errors: VALIDATION_ERROR (channel, filters, message_format.template),
// RESOURCE_LIMIT_EXCEEDED, INTERNAL_ERROR.
func (s *Store) CreateChatIntegration(ctx context.Context, p *models.Principal, spec ChatSpec) (*ChatIntegration, error) {
	if spec.Template == "" {
		spec.Template = DefaultChatTemplate
	}
	var v models.Validator
	checkChatSpec(&v, &spec.Channel, &spec.Filters, &spec.Template)
	if err := v.Err(); err != nil {
		return nil, err
	}
	c := &ChatIntegration{ID: models.NewID(PrefixChatIntegration), WebhookURL: spec.WebhookURL, Channel: strings.TrimSpace(spec.Channel),
		Events: spec.Events, CustomerIDs: spec.Filters.CustomerIDs, Priorities: spec.Filters.Priorities, Template: spec.Template,
		Active: spec.Active, CreatedBy: p.ID}
	if err := s.createCapped(ctx, p, &ChatIntegration{}, c, MaxChatsPerTenant, "chat_integrations", "chat integrations"); err != nil {
		return nil, err
	}
	return c, nil
}

// createCapped creates row in p's own organization and environment, in
// one transaction with the count of model's rows there, unless there are
// already max (RESOURCE_LIMIT_EXCEEDED, details resource and limit).
func (s *Store) createCapped(ctx context.Context, p *models.Principal, model, row any, max int, resource, what string) error {
	err := s.core.Tx(ctx, p.OwnScope(), func(tx *gorm.DB) error {
		var n int64
		if err := tx.Model(model).Count(&n).Error; err != nil {
			return models.DBErr(err)
		}
		if n >= int64(max) {
			return models.Errorf(models.CodeResourceLimit, "this organization already has %d %s in this environment, the most it may hold; delete one first", n, what).
				WithDetail("resource", resource).WithDetail("limit", max)
		}
		return models.DBErr(tx.Create(row).Error)
	})
	if err != nil {
		return models.AsError(err)
	}
	return nil
}

// GetChatIntegration returns a chat integration visible to p. Errors: NOT_FOUND.
func (s *Store) GetChatIntegration(ctx context.Context, p *models.Principal, id string) (*ChatIntegration, error) {
	return s.ChatIntegrationIn(ctx, p.Scope(), id)
}

// ChatIntegrationIn returns a chat integration in scope. Errors: NOT_FOUND.
func (s *Store) ChatIntegrationIn(ctx context.Context, scope models.Scope, id string) (*ChatIntegration, error) {
	var c ChatIntegration
	err := s.core.In(ctx, scope).Where("id = ?", id).Take(&c).Error
	return &c, models.NotFoundOr(err, "chat integration")
}

var chatSorts = models.SortFields{"created_at": "created_at", "channel": "channel"}

// ListChatIntegrations returns a page of the chat integrations visible to p.
// Errors: VALIDATION_ERROR (sort).
func (s *Store) ListChatIntegrations(ctx context.Context, p *models.Principal, page models.PageRequest) ([]ChatIntegration, int64, error) {
	var out []ChatIntegration
	total, err := models.Paginate(s.core.In(ctx, p.Scope()).Model(&ChatIntegration{}), page, chatSorts, &out)
	return out, total, err
}

// UpdateChatIntegration applies a patch whose URL and events are already
// checked. Errors: NOT_FOUND, VALIDATION_ERROR (channel, filters,
// message_format.template).
func (s *Store) UpdateChatIntegration(ctx context.Context, p *models.Principal, id string, patch ChatPatch) (*ChatIntegration, error) {
	var v models.Validator
	checkChatSpec(&v, patch.Channel, patch.Filters, patch.Template)
	if err := v.Err(); err != nil {
		return nil, err
	}
	err := s.core.Tx(ctx, p.Scope(), func(tx *gorm.DB) error {
		var c ChatIntegration
		if err := tx.Where("id = ?", id).Take(&c).Error; err != nil {
			return models.NotFoundOr(err, "chat integration")
		}
		if patch.WebhookURL != nil {
			c.WebhookURL = *patch.WebhookURL
		}
		if patch.Channel != nil {
			c.Channel = strings.TrimSpace(*patch.Channel)
		}
		if patch.Events != nil {
			c.Events = patch.Events
		}
		if patch.Filters != nil {
			c.CustomerIDs, c.Priorities = patch.Filters.CustomerIDs, patch.Filters.Priorities
		}
		if patch.Template != nil {
			c.Template = *patch.Template
		}
		if patch.Active != nil {
			c.Active = *patch.Active
		}
		c.UpdatedAt = s.now()
		return models.DBErr(tx.Save(&c).Error)
	})
	if err != nil {
		return nil, models.AsError(err)
	}
	return s.GetChatIntegration(ctx, p, id)
}

// DeleteChatIntegration removes a chat integration; its deliveries are
// kept (a pending one stops at its next attempt). Errors: NOT_FOUND.
func (s *Store) DeleteChatIntegration(ctx context.Context, p *models.Principal, id string) error {
	res := s.core.In(ctx, p.Scope()).Where("id = ?", id).Delete(&ChatIntegration{})
	if res.Error != nil {
		return models.DBErr(res.Error)
	}
	if res.RowsAffected == 0 {
		return models.NotFound("chat integration")
	}
	return nil
}

// CandidateChatIntegrations returns the active chat integrations of ev's
// organization and environment that existed when it happened, oldest
// first; the caller matches their events and filters.
func (s *Store) CandidateChatIntegrations(ctx context.Context, ev *eventlog.Event) ([]ChatIntegration, error) {
	var out []ChatIntegration
	err := s.core.In(ctx, models.TenantScope(ev.OrganizationID, ev.Environment)).Where("active = ? AND created_at <= ?", true, ev.CreatedAt).
		Order("created_at, id").Find(&out).Error
	return out, models.DBErr(err)
}
