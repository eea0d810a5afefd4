package support

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"gorm.io/gorm"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/eventlog"
	"github.com/telcoplatform/platform/models/identity"
)

// PrefixRoutingRule starts routing rule ids.
const PrefixRoutingRule = "rrule"

// Bounds of a routing rule.
const (
	MaxRuleName        = 200
	MaxRuleKeywords    = 20
	MaxRuleKeyword     = 100
	MaxRuleNotify      = 20
	MaxRuleDurationMin = 30 * 24 * 60 // escalate_after and auto_update_frequency: at most 30 days
)

// ActorSystem is the actor type of changes made by the platform itself (a
// routing rule assigning a new ticket); the actor id is the rule's.
const ActorSystem = "system"

// RoutingRule assigns new tickets. Its conditions (all optional, all must
// hold) are a category, a list of priorities, keywords (any of them in the
// title or the description, in any case) and a customer tier (the plan of
// the customer's organization). Its actions assign the ticket to a
// provider agent or a team, e-mail the notify list when the rule assigns,
// and say when to escalate and how often to update the customer (timers of
// the ticket's SLA workflow, sla_routing_timers.go). Rules are the provider's: the same
// for every tenant and environment.
type RoutingRule struct {
	ID                   string    `gorm:"primaryKey;size:40"`
	Name                 string    `gorm:"size:200;not null"`
	Category             string    `gorm:"size:40"`
	Priorities           []string  `gorm:"serializer:json;type:text"`
	Keywords             []string  `gorm:"serializer:json;type:text"`
	CustomerTier         string    `gorm:"size:20"`
	AssignTo             string    `gorm:"size:40"`
	Notify               []string  `gorm:"serializer:json;type:text"`
	EscalateAfterMinutes int       `gorm:"not null;default:0"`
	AutoUpdateMinutes    int       `gorm:"not null;default:0"`
	Active               bool      `gorm:"not null;default:false;index"`
	CreatedBy            string    `gorm:"size:40;not null"`
	CreatedAt            time.Time `gorm:"not null;index"`
	UpdatedAt            time.Time `gorm:"not null"`
}

// TableName is the routing rules table.
func (RoutingRule) TableName() string { return "support_routing_rules" }

// Matches reports whether every condition of r holds for t, a ticket of a
// customer whose organization has the plan tier.
func (r *RoutingRule) Matches(t *Ticket, tier string) bool {
	if r.Category != "" && r.Category != t.Category {
		return false
	}
	if len(r.Priorities) > 0 && !slices.Contains(r.Priorities, t.Priority) {
		return false
	}
	if r.CustomerTier != "" && r.CustomerTier != tier {
		return false
	}
	if len(r.Keywords) > 0 {
		text := strings.ToLower(t.Title + "\n" + t.Description)
		if !slices.ContainsFunc(r.Keywords, func(k string) bool { return strings.Contains(text, strings.ToLower(k)) }) {
			return false
		}
	}
	return true
}

// SortRules puts rules in evaluation order: rules with a priority
// condition first, then the others; within each group the oldest first,
// then by id.
func SortRules(rules []RoutingRule) {
	slices.SortStableFunc(rules, func(a, b RoutingRule) int {
		ap, bp := len(a.Priorities) > 0, len(b.Priorities) > 0
		switch {
		case ap && !bp:
			return -1
		case bp && !ap:
			return 1
		}
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
}

// RuleInput is a routing rule's fields as sent; nil fields are absent (on
// creation: empty; on an update: unchanged).
type RuleInput struct {
	Name                *string
	Category            *string
	Priorities          *[]string
	Keywords            *[]string
	CustomerTier        *string
	AssignTo            *string
	Notify              *[]string
	EscalateAfter       *string // a duration: 30m, 2h, 1h30m
	AutoUpdateFrequency *string
	Active              *bool // default true on creation
}

// CanManageRouting reports whether p may manage routing rules: provider
// staff holding support:admin.
func CanManageRouting(p *models.Principal) bool { return p.IsStaff() && p.Can(PermissionAdmin) }

func routingForbidden() error {
	return models.Errorf(models.CodeInsufficientPermissions, "routing rules are managed by provider staff with %s", PermissionAdmin).
		WithDetail("required_permission", PermissionAdmin)
}

// CreateRoutingRule validates in and stores a new rule (active unless
// in.Active is false). Errors: INSUFFICIENT_PERMISSIONS, VALIDATION_ERROR.
func (s *Store) CreateRoutingRule(ctx context.Context, p *models.Principal, in RuleInput) (*RoutingRule, error) {
	if !CanManageRouting(p) {
		return nil, routingForbidden()
	}
	now := s.now()
	r := &RoutingRule{ID: models.NewID(PrefixRoutingRule), Active: true, CreatedBy: actorID(p), CreatedAt: now, UpdatedAt: now}
	if err := s.applyRule(ctx, r, in); err != nil {
		return nil, err
	}
	if err := s.core.In(ctx, models.SystemScope()).Create(r).Error; err != nil {
		return nil, dbErr(err)
	}
	return r, nil
}

// GetRoutingRule returns one rule. Errors: INSUFFICIENT_PERMISSIONS, NOT_FOUND.
func (s *Store) GetRoutingRule(ctx context.Context, p *models.Principal, id string) (*RoutingRule, error) {
	if !CanManageRouting(p) {
		return nil, routingForbidden()
	}
	var r RoutingRule
	if err := s.core.In(ctx, models.SystemScope()).Where("id = ?", id).Take(&r).Error; err != nil {
		return nil, notFoundOr(err, "routing rule")
	}
	return &r, nil
}

// ruleSorts are the fields a routing rule list sorts by.
var ruleSorts = models.SortFields{"created_at": "created_at", "updated_at": "updated_at", "rule_name": "name"}

// ListRoutingRules returns a page of the rules, newest first by default.
// Errors: INSUFFICIENT_PERMISSIONS, VALIDATION_ERROR (sort).
func (s *Store) ListRoutingRules(ctx context.Context, p *models.Principal, page models.PageRequest) ([]RoutingRule, int64, error) {
	if !CanManageRouting(p) {
		return nil, 0, routingForbidden()
	}
	var out []RoutingRule
	total, err := models.Paginate(s.core.In(ctx, models.SystemScope()).Model(&RoutingRule{}), page, ruleSorts, &out)
	return out, total, err
}

// UpdateRoutingRule applies the fields of in that are present to a rule.
// Errors: INSUFFICIENT_PERMISSIONS, NOT_FOUND, VALIDATION_ERROR.
func (s *Store) UpdateRoutingRule(ctx context.Context, p *models.Principal, id string, in RuleInput) (*RoutingRule, error) {
	r, err := s.GetRoutingRule(ctx, p, id)
	if err != nil {
		return nil, err
	}
	if err := s.applyRule(ctx, r, in); err != nil {
		return nil, err
	}
	r.UpdatedAt = s.now()
	if err := s.core.In(ctx, models.SystemScope()).Save(r).Error; err != nil {
		return nil, dbErr(err)
	}
	return r, nil
}

// DeleteRoutingRule removes a rule. Errors: INSUFFICIENT_PERMISSIONS, NOT_FOUND.
func (s *Store) DeleteRoutingRule(ctx context.Context, p *models.Principal, id string) error {
	if !CanManageRouting(p) {
		return routingForbidden()
	}
	res := s.core.In(ctx, models.SystemScope()).Where("id = ?", id).Delete(&RoutingRule{})
	if res.Error != nil {
		return dbErr(res.Error)
	}
	if res.RowsAffected == 0 {
		return models.NotFound("routing rule")
	}
	return nil
}

// applyRule sets the present fields of in on r and validates the result
// (every field, so a creation or an update reports every issue at once).
func (s *Store) applyRule(ctx context.Context, r *RoutingRule, in RuleInput) error {
	var v models.Validator
	trim := func(p *string) string { return strings.TrimSpace(*p) }
	if in.Name != nil {
		r.Name = trim(in.Name)
	}
	if in.Category != nil {
		r.Category = trim(in.Category)
	}
	if in.Priorities != nil {
		r.Priorities = cleanList(*in.Priorities)
	}
	if in.Keywords != nil {
		r.Keywords = cleanList(*in.Keywords)
	}
	if in.CustomerTier != nil {
		r.CustomerTier = trim(in.CustomerTier)
	}
	if in.AssignTo != nil {
		r.AssignTo = trim(in.AssignTo)
	}
	if in.Notify != nil {
		r.Notify = cleanList(*in.Notify)
	}
	if in.EscalateAfter != nil {
		r.EscalateAfterMinutes = parseRuleDuration(&v, "actions.escalate_after", trim(in.EscalateAfter))
	}
	if in.AutoUpdateFrequency != nil {
		r.AutoUpdateMinutes = parseRuleDuration(&v, "actions.auto_update_frequency", trim(in.AutoUpdateFrequency))
	}
	if in.Active != nil {
		r.Active = *in.Active
	}
	v.Check(r.Name != "", "rule_name", "is required")
	checkLen(&v, "rule_name", r.Name, MaxRuleName)
	if r.Category != "" {
		cats, err := s.ListCategories(ctx)
		if err != nil {
			return err
		}
		v.Check(categoryByID(cats, r.Category) != nil, "conditions.category", "must be one of "+joinList(categoryIDs(cats)))
	}
	for _, pr := range r.Priorities {
		v.Check(priorityRank(pr) >= 0, "conditions.priority", "must list only "+joinList(Priorities()))
	}
	v.Check(len(r.Keywords) <= MaxRuleKeywords, "conditions.keywords", "must have at most "+itoa(MaxRuleKeywords)+" keywords")
	for _, k := range r.Keywords {
		v.Check(utf8.RuneCountInString(k) <= MaxRuleKeyword, "conditions.keywords", "must each be at most "+itoa(MaxRuleKeyword)+" characters")
	}
	tiers := []string{string(models.PlanDeveloper), string(models.PlanBusiness), string(models.PlanEnterprise), string(models.PlanCustom)}
	v.Check(r.CustomerTier == "" || slices.Contains(tiers, r.CustomerTier), "conditions.customer_tier", "must be a plan: "+joinList(tiers))
	if r.AssignTo != "" {
		var err error
		if isTeamID(r.AssignTo) {
			_, err = s.team(ctx, r.AssignTo)
		} else {
			_, err = s.agent(ctx, r.AssignTo)
		}
		v.Check(err == nil, "actions.assign_to", "must be the id of a provider agent (usr_) or of a team (team_)")
	}
	v.Check(len(r.Notify) <= MaxRuleNotify, "actions.notify", "must have at most "+itoa(MaxRuleNotify)+" addresses")
	for _, e := range r.Notify {
		v.Check(ValidEmail(e), "actions.notify", "must list e-mail addresses such as noc@example.com")
	}
	v.Check(r.AssignTo != "" || len(r.Notify) > 0 || r.EscalateAfterMinutes != 0 || r.AutoUpdateMinutes != 0, "actions",
		"must have at least one of assign_to, notify, escalate_after, auto_update_frequency")
	return v.Err()
}

// cleanList trims the items of l and drops empty ones and repeats.
func cleanList(l []string) []string {
	out := []string{}
	for _, s := range l {
		if s = strings.TrimSpace(s); s != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// parseRuleDuration reads a duration such as 30m, 2h or 1h30m as whole
// minutes, 1 minute to 30 days ("" is 0: none; a bad one is -1, with its
// issue in v).
func parseRuleDuration(v *models.Validator, field, s string) int {
	if s == "" {
		return 0
	}
	d, err := time.ParseDuration(s)
	ok := err == nil && d >= time.Minute && d%time.Minute == 0 && d <= MaxRuleDurationMin*time.Minute
	v.Check(ok, field, "must be a duration of whole minutes between 1m and 720h, such as 30m, 2h or 1h30m")
	if !ok {
		return -1
	}
	return int(d / time.Minute)
}

// agent returns the provider agent (role agent or admin) with id.
func (s *Store) agent(ctx context.Context, id string) (*identity.User, error) {
	var u identity.User
	err := s.core.In(ctx, models.SystemScope()).Where("id = ? AND role IN ?", id, []models.Role{models.RoleAgent, models.RoleAdmin}).Take(&u).Error
	if err != nil {
		return nil, notFoundOr(err, "agent")
	}
	return &u, nil
}

// Routing is how a new ticket was assigned: by a rule (Rule set), or, when
// no rule assigns, by its category's team (Team set, Rule nil).
type Routing struct {
	Rule  *RoutingRule
	Team  *Team // the team the agent was taken from (a rule's team, or the fallback)
	Agent *identity.User
}

// actor is the id the history records as the assigning system actor: the
// rule's, or the team's for the fallback.
func (r *Routing) actor() string {
	if r.Rule != nil {
		return r.Rule.ID
	}
	return r.Team.ID
}

// route finds who gets t, a new ticket of a customer whose organization
// has the plan tier:
//
//  1. the first active rule, in the order of SortRules, whose conditions
//     hold and whose assign_to still names a provider agent, or a team with
//     a member left (its least-loaded member, see leastLoaded); rules
//     without assign_to, or naming a removed agent or an empty team, are
//     passed over;
//  2. else the least-loaded member of the team of the ticket's category.
//
// It returns nil when nobody is found (the ticket stays unassigned).
func (s *Store) route(ctx context.Context, t *Ticket, tier string) (*Routing, error) {
	var rules []RoutingRule
	if err := s.core.In(ctx, models.SystemScope()).Where("active = ? AND assign_to <> ?", true, "").Find(&rules).Error; err != nil {
		return nil, dbErr(err)
	}
	SortRules(rules)
	for i := range rules {
		if !rules[i].Matches(t, tier) {
			continue
		}
		if !isTeamID(rules[i].AssignTo) {
			if u, err := s.agent(ctx, rules[i].AssignTo); err == nil {
				return &Routing{Rule: &rules[i], Agent: u}, nil
			}
			continue
		}
		team, err := s.team(ctx, rules[i].AssignTo)
		if err != nil {
			continue
		}
		u, err := s.leastLoaded(ctx, team.ID)
		if err != nil {
			return nil, err
		}
		if u != nil {
			return &Routing{Rule: &rules[i], Team: team, Agent: u}, nil
		}
	}
	team, err := s.categoryTeam(ctx, t.Category)
	if err != nil || team == nil {
		return nil, err
	}
	u, err := s.leastLoaded(ctx, team.ID)
	if err != nil || u == nil {
		return nil, err
	}
	return &Routing{Team: team, Agent: u}, nil
}

// recordRouting records, inside tx, the assignment of the new ticket t in
// its history (actor: the system, as the rule or the team), and queues the
// e-mails of the rule's notify list through the notification outbox.
func (s *Store) recordRouting(tx *gorm.DB, t *Ticket, r *Routing) error {
	h := &HistoryEntry{ID: models.NewID(PrefixHistory), TicketID: t.ID, Field: "assigned_to", NewValue: t.AssignedTo,
		ActorID: r.actor(), ActorType: ActorSystem, CreatedAt: t.CreatedAt}
	if err := tx.Create(h).Error; err != nil {
		return dbErr(err)
	}
	if r.Rule == nil || len(r.Rule.Notify) == 0 || s.core.Sealer == nil {
		return nil
	}
	msg := fmt.Sprintf("Routing rule %q assigned ticket %s (%s, priority %s, customer %s) to %s <%s>.",
		r.Rule.Name, t.Number, t.Category, t.Priority, t.CustomerID, r.Agent.Name, r.Agent.Email)
	if r.Team != nil {
		msg += " Team: " + r.Team.Name + "."
	}
	data := emailData{Ticket: t, Variables: map[string]string{"message": msg}}
	subject := "[" + t.Number + "] Routed to " + r.Agent.Name + ": " + t.Title
	if len(subject) > MaxNotifySubject {
		subject = strings.ToValidUTF8(subject[:MaxNotifySubject], "")
	}
	for _, to := range r.Rule.Notify {
		subj, body, err := renderEmail(TemplateCustom, data, subject)
		if err != nil {
			return err
		}
		m := eventlog.Message{Channel: eventlog.ChannelEmail, Recipient: to, Template: "support_" + TemplateCustom, Subject: subj, Body: body, Role: "support"}
		if _, err := s.queue(tx, t, m, NotifyRecipient{Email: to, Role: "routing_notify"}, TriggerRouted, r.Rule.ID); err != nil {
			return err
		}
	}
	return nil
}
