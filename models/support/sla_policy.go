package support

import (
	"context"
	"math"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/businesstime"
)

// PrefixSLAPolicy starts SLA policy ids.
const PrefixSLAPolicy = "slap"

// Service tiers an SLA policy applies to (the SLA of a service).
const (
	TierStandard   = "standard"
	TierPremium    = "premium"
	TierEnterprise = "enterprise"
)

// Tiers returns the service tiers, lowest first.
func Tiers() []string { return []string{TierStandard, TierPremium, TierEnterprise} }

// Metrics an escalation step watches.
const (
	MetricResponse   = "response"
	MetricResolution = "resolution"
)

// Metrics returns the escalation metrics, in the order of a ladder.
func Metrics() []string { return []string{MetricResponse, MetricResolution} }

// Escalation actions.
const (
	ActionNotifyAssignee   = "notify_assignee"
	ActionNotifyTeamLead   = "notify_team_lead"
	ActionReassignTeamLead = "reassign_team_lead"
	ActionPageDutyManager  = "page_duty_manager"
	ActionNotifyRecipients = "notify"
)

const (
	defaultWarningPercent   = 75    // percent of a target
	maxCreditBasisPoints    = 10000 // 100 percent
	maxEscalationRecipients = 20
)

// EscalationActions returns the actions of an escalation step.
func EscalationActions() []string {
	return []string{ActionNotifyAssignee, ActionNotifyTeamLead, ActionReassignTeamLead, ActionPageDutyManager, ActionNotifyRecipients, ActionEscalate}
}

// Bounds of an SLA policy.
const (
	MaxPolicyName        = 200
	MaxPolicyDescription = 1000
	MaxEscalationSteps   = 10
	MaxEscalationPercent = 500
)

// SLAPolicy is the service level of the tickets of a service tier and a
// category: per priority, how fast they are answered, resolved and updated
// (SLAPolicyTarget), counted in calendar time or in the business hours of
// its calendar; when a warning is raised (WarningPercent of a target
// elapsed); the credit owed on a resolution breach; and the escalation
// ladder. Tier and Category are "" for "any"; at most one policy exists per
// (Tier, Category). Policies are the provider's, the same for every tenant.
type SLAPolicy struct {
	ID              string            `gorm:"primaryKey;size:40"`
	Name            string            `gorm:"size:200;not null"`
	Description     string            `gorm:"size:1000"`
	Tier            string            `gorm:"size:20;not null;uniqueIndex:idx_support_sla_policies_scope,priority:1"`
	Category        string            `gorm:"size:40;not null;uniqueIndex:idx_support_sla_policies_scope,priority:2"`
	CalendarID      string            `gorm:"size:40;not null;index"` // "": calendar time only
	WarningPercent  int               `gorm:"not null"`
	CreditPercentBP int               `gorm:"column:credit_percent_bp;not null"` // basis points of the monthly price
	Escalation      []EscalationStep  `gorm:"serializer:json;type:text"`
	CreatedAt       time.Time         `gorm:"not null;index"`
	UpdatedAt       time.Time         `gorm:"not null"`
	Targets         []SLAPolicyTarget `gorm:"-"` // highest priority first
}

// TableName is the SLA policies table.
func (SLAPolicy) TableName() string { return "support_sla_policies" }

// SLAPolicyTarget is a policy's target for one priority, in minutes
// (UpdateMinutes 0: no update interval). BusinessHours counts them in the
// business hours of the policy's calendar (calendar time when the policy
// has none).
type SLAPolicyTarget struct {
	PolicyID          string `gorm:"primaryKey;size:40"`
	Priority          string `gorm:"primaryKey;size:16"`
	ResponseMinutes   int    `gorm:"not null"`
	ResolutionMinutes int    `gorm:"not null"`
	UpdateMinutes     int    `gorm:"not null"`
	BusinessHours     bool   `gorm:"not null"`
}

// TableName is the SLA policy targets table.
func (SLAPolicyTarget) TableName() string { return "support_sla_policy_targets" }

// Target returns the policy's target for priority (ok false when none).
func (p *SLAPolicy) Target(priority string) (SLAPolicyTarget, bool) {
	for _, t := range p.Targets {
		if t.Priority == priority {
			return t, true
		}
	}
	return SLAPolicyTarget{}, false
}

// EscalationStep is one rung of a policy's escalation ladder: when
// AtPercent of the Metric's target has elapsed (100: the breach; above:
// after it), do Action; Recipients are the addresses of the notify action;
// RepeatEveryMinutes (0: once, only from 100 up) repeats it;
// WorkingHoursOnly holds it outside the calendar's working hours.
type EscalationStep struct {
	Metric             string   `json:"metric"`
	AtPercent          int      `json:"at_percent"`
	Action             string   `json:"action"`
	Recipients         []string `json:"recipients,omitempty"`
	RepeatEveryMinutes int      `json:"repeat_every_minutes,omitempty"`
	WorkingHoursOnly   bool     `json:"working_hours_only,omitempty"`
}

// SortEscalation orders a ladder: by metric (response, then resolution),
// then at_percent, then action.
func SortEscalation(steps []EscalationStep) {
	slices.SortStableFunc(steps, func(a, b EscalationStep) int {
		if c := slices.Index(Metrics(), a.Metric) - slices.Index(Metrics(), b.Metric); c != 0 {
			return c
		}
		if c := a.AtPercent - b.AtPercent; c != 0 {
			return c
		}
		return strings.Compare(a.Action, b.Action)
	})
}

// PolicyTargetInput is a policy's target of one priority as sent:
// durations of whole minutes (15m, 4h, 1h30m); UpdateInterval "" is none.
type PolicyTargetInput struct {
	ResponseTime   string
	ResolutionTime string
	UpdateInterval string
	BusinessHours  bool
}

// EscalationStepInput is an escalation step as sent (RepeatEvery: a
// duration, "" for none).
type EscalationStepInput struct {
	Metric           string
	AtPercent        int
	Action           string
	Recipients       []string
	RepeatEvery      string
	WorkingHoursOnly bool
}

// PolicyInput is a policy's fields as sent; nil fields are absent (on
// creation: defaults; on an update: unchanged). Targets replace the
// targets of the priorities they name (on creation the others take
// DefaultSLATargets in calendar time); Escalation, when sent, replaces the
// ladder. CreditPercent is a percentage with at most two decimals.
type PolicyInput struct {
	Name           *string
	Description    *string
	Tier           *string
	Category       *string
	CalendarID     *string
	WarningPercent *int
	CreditPercent  *float64
	Targets        map[string]PolicyTargetInput
	Escalation     *[]EscalationStepInput
}

// CreditPercent is the credit owed on a resolution breach, as a percentage
// of the service's monthly price (two decimals).
func (p *SLAPolicy) CreditPercent() float64 { return float64(p.CreditPercentBP) / 100 }

// defaultPolicyTargets are DefaultSLATargets for policyID, in calendar
// time, without update interval, highest priority first.
func defaultPolicyTargets(policyID string) []SLAPolicyTarget {
	d := DefaultSLATargets()
	out := []SLAPolicyTarget{}
	for _, pr := range slices.Backward(Priorities()) {
		out = append(out, SLAPolicyTarget{PolicyID: policyID, Priority: pr, ResponseMinutes: d[pr][0], ResolutionMinutes: d[pr][1]})
	}
	return out
}

// CreateSLAPolicy validates in and stores a new policy with its targets.
// Errors: INSUFFICIENT_PERMISSIONS, VALIDATION_ERROR, ALREADY_EXISTS (a
// policy for the same tier and category exists).
func (s *Store) CreateSLAPolicy(ctx context.Context, p *models.Principal, in PolicyInput) (*SLAPolicy, error) {
	if !CanAdminister(p) {
		return nil, slaAdminForbidden()
	}
	now := s.now()
	pol := &SLAPolicy{ID: models.NewID(PrefixSLAPolicy), WarningPercent: defaultWarningPercent, Escalation: []EscalationStep{},
		CreatedAt: now, UpdatedAt: now}
	pol.Targets = defaultPolicyTargets(pol.ID)
	if err := s.applyPolicy(ctx, pol, in); err != nil {
		return nil, err
	}
	err := s.core.Tx(ctx, models.SystemScope(), func(tx *gorm.DB) error {
		if err := policyScopeFree(tx, pol); err != nil {
			return err
		}
		if err := tx.Create(pol).Error; err != nil {
			return policyWriteErr(err, pol)
		}
		return writePolicyTargets(tx, pol)
	})
	if err != nil {
		return nil, models.AsError(err)
	}
	return pol, nil
}

// policyScopeFree refuses a second policy for pol's tier and category.
func policyScopeFree(tx *gorm.DB, pol *SLAPolicy) error {
	var other []string
	if err := tx.Model(&SLAPolicy{}).Where("tier = ? AND category = ? AND id <> ?", pol.Tier, pol.Category, pol.ID).Pluck("id", &other).Error; err != nil {
		return dbErr(err)
	}
	if len(other) > 0 {
		return scopeTaken(pol, other[0])
	}
	return nil
}

func scopeTaken(pol *SLAPolicy, other string) error {
	return models.Errorf(models.CodeAlreadyExists, "an SLA policy for tier %q and category %q already exists (%s): edit it instead",
		pol.Tier, pol.Category, other).WithDetail("tier", pol.Tier).WithDetail("category", pol.Category).WithDetail("policy_id", other)
}

// policyWriteErr maps a write failure of pol (a unique violation is a
// concurrent policy for the same scope).
func policyWriteErr(err error, pol *SLAPolicy) error {
	if models.IsUniqueViolation(err) {
		return scopeTaken(pol, "")
	}
	return dbErr(err)
}

// writePolicyTargets replaces pol's targets.
func writePolicyTargets(tx *gorm.DB, pol *SLAPolicy) error {
	if err := tx.Where("policy_id = ?", pol.ID).Delete(&SLAPolicyTarget{}).Error; err != nil {
		return dbErr(err)
	}
	for _, t := range pol.Targets {
		t.PolicyID = pol.ID
		if err := tx.Create(&t).Error; err != nil {
			return dbErr(err)
		}
	}
	return nil
}

// GetSLAPolicy returns one policy with its targets.
// Errors: INSUFFICIENT_PERMISSIONS, NOT_FOUND.
func (s *Store) GetSLAPolicy(ctx context.Context, p *models.Principal, id string) (*SLAPolicy, error) {
	if !CanReadSLA(p) {
		return nil, slaReadForbidden()
	}
	return s.slaPolicy(ctx, id)
}

// slaPolicy returns one policy with its targets. Errors: NOT_FOUND.
func (s *Store) slaPolicy(ctx context.Context, id string) (*SLAPolicy, error) {
	var pol SLAPolicy
	if err := s.core.In(ctx, models.SystemScope()).Where("id = ?", id).Take(&pol).Error; err != nil {
		return nil, notFoundOr(err, "SLA policy")
	}
	if err := s.loadTargets(ctx, []*SLAPolicy{&pol}); err != nil {
		return nil, err
	}
	return &pol, nil
}

// loadTargets fills the targets of pols, highest priority first.
func (s *Store) loadTargets(ctx context.Context, pols []*SLAPolicy) error {
	if len(pols) == 0 {
		return nil
	}
	ids := make([]string, len(pols))
	for i, p := range pols {
		ids[i], p.Targets = p.ID, []SLAPolicyTarget{}
		if p.Escalation == nil {
			p.Escalation = []EscalationStep{}
		}
	}
	var ts []SLAPolicyTarget
	if err := s.core.In(ctx, models.SystemScope()).Where("policy_id IN ?", ids).Find(&ts).Error; err != nil {
		return dbErr(err)
	}
	for _, t := range ts {
		for _, p := range pols {
			if p.ID == t.PolicyID {
				p.Targets = append(p.Targets, t)
			}
		}
	}
	for _, p := range pols {
		slices.SortFunc(p.Targets, func(a, b SLAPolicyTarget) int { return priorityRank(b.Priority) - priorityRank(a.Priority) })
	}
	return nil
}

// policySorts are the fields a policy list sorts by.
var policySorts = models.SortFields{"created_at": "created_at", "updated_at": "updated_at", "name": "name"}

// ListSLAPolicies returns a page of the policies, newest first by default.
// Errors: INSUFFICIENT_PERMISSIONS, VALIDATION_ERROR (sort).
func (s *Store) ListSLAPolicies(ctx context.Context, p *models.Principal, page models.PageRequest) ([]SLAPolicy, int64, error) {
	if !CanReadSLA(p) {
		return nil, 0, slaReadForbidden()
	}
	var out []SLAPolicy
	total, err := models.Paginate(s.core.In(ctx, models.SystemScope()).Model(&SLAPolicy{}), page, policySorts, &out)
	if err != nil {
		return nil, 0, err
	}
	ptrs := make([]*SLAPolicy, len(out))
	for i := range out {
		ptrs[i] = &out[i]
	}
	return out, total, s.loadTargets(ctx, ptrs)
}

// UpdateSLAPolicy applies the fields of in that are present to a policy;
// the result is validated as a whole policy. Errors:
// INSUFFICIENT_PERMISSIONS, NOT_FOUND, VALIDATION_ERROR, ALREADY_EXISTS.
func (s *Store) UpdateSLAPolicy(ctx context.Context, p *models.Principal, id string, in PolicyInput) (*SLAPolicy, error) {
	if !CanAdminister(p) {
		return nil, slaAdminForbidden()
	}
	pol, err := s.slaPolicy(ctx, id)
	if err != nil {
		return nil, err
	}
	if err := s.applyPolicy(ctx, pol, in); err != nil {
		return nil, err
	}
	pol.UpdatedAt = s.now()
	err = s.core.Tx(ctx, models.SystemScope(), func(tx *gorm.DB) error {
		if err := policyScopeFree(tx, pol); err != nil {
			return err
		}
		if err := tx.Model(pol).Select("name", "description", "tier", "category", "calendar_id", "warning_percent", "credit_percent_bp",
			"escalation", "updated_at").Updates(pol).Error; err != nil {
			return policyWriteErr(err, pol)
		}
		return writePolicyTargets(tx, pol)
	})
	if err != nil {
		return nil, models.AsError(err)
	}
	return pol, nil
}

// DeleteSLAPolicy removes a policy and its targets. Tickets keep the
// targets they were given. Errors: INSUFFICIENT_PERMISSIONS, NOT_FOUND.
func (s *Store) DeleteSLAPolicy(ctx context.Context, p *models.Principal, id string) error {
	if !CanAdminister(p) {
		return slaAdminForbidden()
	}
	err := s.core.Tx(ctx, models.SystemScope(), func(tx *gorm.DB) error {
		res := tx.Where("id = ?", id).Delete(&SLAPolicy{})
		if res.Error != nil {
			return dbErr(res.Error)
		}
		if res.RowsAffected == 0 {
			return models.NotFound("SLA policy")
		}
		return dbErr(tx.Where("policy_id = ?", id).Delete(&SLAPolicyTarget{}).Error)
	})
	if err != nil {
		return models.AsError(err)
	}
	return nil
}

// applyPolicy sets the present fields of in on pol and validates the
// result (every field, so every issue is reported at once).
func (s *Store) applyPolicy(ctx context.Context, pol *SLAPolicy, in PolicyInput) error {
	var v models.Validator
	trim := func(p *string) string { return strings.TrimSpace(*p) }
	if in.Name != nil {
		pol.Name = trim(in.Name)
	}
	v.Check(pol.Name != "", "name", "is required")
	checkLen(&v, "name", pol.Name, MaxPolicyName)
	if in.Description != nil {
		pol.Description = trim(in.Description)
	}
	checkLen(&v, "description", pol.Description, MaxPolicyDescription)
	if in.Tier != nil {
		pol.Tier = trim(in.Tier)
	}
	v.Check(pol.Tier == "" || slices.Contains(Tiers(), pol.Tier), "tier", `must be "" (any tier) or one of `+joinList(Tiers()))
	if in.Category != nil {
		pol.Category = trim(in.Category)
	}
	if pol.Category != "" {
		cats, err := s.ListCategories(ctx)
		if err != nil {
			return err
		}
		v.Check(categoryByID(cats, pol.Category) != nil, "category", `must be "" (any category) or one of `+joinList(categoryIDs(cats)))
	}
	if in.CalendarID != nil {
		pol.CalendarID = trim(in.CalendarID)
	}
	if pol.CalendarID != "" {
		_, err := s.calendar(ctx, pol.CalendarID)
		if err != nil && models.ErrorCode(err) != models.CodeNotFound {
			return err
		}
		v.Check(err == nil, "calendar_id", `must be "" (calendar time) or the id of a calendar (cal_)`)
	}
	if in.WarningPercent != nil {
		pol.WarningPercent = *in.WarningPercent
	}
	v.Check(pol.WarningPercent >= 1 && pol.WarningPercent <= 99, "warning_percent", "must be between 1 and 99")
	if in.CreditPercent != nil {
		bp := *in.CreditPercent * 100
		ok := bp >= 0 && bp <= maxCreditBasisPoints && math.Abs(bp-math.Round(bp)) < 1e-6
		v.Check(ok, "credit_percent", "must be between 0 and 100 with at most two decimals")
		if ok {
			pol.CreditPercentBP = int(math.Round(bp))
		}
	}
	applyPolicyTargets(&v, pol, in.Targets)
	if in.Escalation != nil {
		pol.Escalation = parseEscalation(&v, *in.Escalation)
	}
	return v.Err()
}

// applyPolicyTargets replaces the targets of the priorities in targets.
func applyPolicyTargets(v *models.Validator, pol *SLAPolicy, targets map[string]PolicyTargetInput) {
	for pr := range targets {
		if priorityRank(pr) < 0 {
			v.Add("targets."+pr, "is not a priority: use "+joinList(Priorities()))
		}
	}
	for _, pr := range Priorities() {
		t, ok := targets[pr]
		if !ok {
			continue
		}
		field := "targets." + pr
		resp := parseRuleDuration(v, field+".response_time", strings.TrimSpace(t.ResponseTime))
		res := parseRuleDuration(v, field+".resolution_time", strings.TrimSpace(t.ResolutionTime))
		upd := parseRuleDuration(v, field+".update_interval", strings.TrimSpace(t.UpdateInterval))
		v.Check(strings.TrimSpace(t.ResponseTime) != "", field+".response_time", "is required")
		v.Check(strings.TrimSpace(t.ResolutionTime) != "", field+".resolution_time", "is required")
		if resp <= 0 || res <= 0 || upd < 0 {
			continue
		}
		v.Check(resp <= res, field+".response_time", "must not be longer than resolution_time")
		nt := SLAPolicyTarget{PolicyID: pol.ID, Priority: pr, ResponseMinutes: resp, ResolutionMinutes: res, UpdateMinutes: upd, BusinessHours: t.BusinessHours}
		if j := slices.IndexFunc(pol.Targets, func(o SLAPolicyTarget) bool { return o.Priority == pr }); j >= 0 {
			pol.Targets[j] = nt
		} else {
			pol.Targets = append(pol.Targets, nt)
		}
	}
	slices.SortFunc(pol.Targets, func(a, b SLAPolicyTarget) int { return priorityRank(b.Priority) - priorityRank(a.Priority) })
}

// parseEscalation validates a ladder as sent and returns it sorted.
func parseEscalation(v *models.Validator, in []EscalationStepInput) []EscalationStep {
	v.Check(len(in) <= MaxEscalationSteps, "escalation", "must have at most "+itoa(MaxEscalationSteps)+" steps")
	out := []EscalationStep{}
	for i, st := range in {
		f := "escalation[" + itoa(i) + "]"
		step := EscalationStep{Metric: strings.TrimSpace(st.Metric), AtPercent: st.AtPercent, Action: strings.TrimSpace(st.Action),
			WorkingHoursOnly: st.WorkingHoursOnly}
		v.Check(slices.Contains(Metrics(), step.Metric), f+".metric", "must be one of "+joinList(Metrics()))
		v.Check(step.AtPercent >= 1 && step.AtPercent <= MaxEscalationPercent, f+".at_percent",
			"must be between 1 and "+itoa(MaxEscalationPercent)+" (100 is the breach)")
		v.Check(slices.Contains(EscalationActions(), step.Action), f+".action", "must be one of "+joinList(EscalationActions()))
		recipients := cleanList(st.Recipients)
		if step.Action == ActionNotifyRecipients {
			v.Check(len(recipients) >= 1 && len(recipients) <= maxEscalationRecipients, f+".recipients",
				"must list 1 to "+itoa(maxEscalationRecipients)+" e-mail addresses with action notify")
			for _, r := range recipients {
				v.Check(ValidEmail(r), f+".recipients", "must list e-mail addresses such as noc@example.com")
			}
			step.Recipients = recipients
		} else {
			v.Check(len(recipients) == 0, f+".recipients", "are only for action notify")
		}
		if rep := strings.TrimSpace(st.RepeatEvery); rep != "" {
			step.RepeatEveryMinutes = parseRuleDuration(v, f+".repeat_every", rep)
			v.Check(step.AtPercent >= 100, f+".repeat_every", "is only for steps at 100 percent or more (at or after the breach)")
		}
		v.Check(!slices.ContainsFunc(out, func(o EscalationStep) bool {
			return o.Metric == step.Metric && o.AtPercent == step.AtPercent && o.Action == step.Action
		}), f, "repeats the metric, at_percent and action of an earlier step")
		out = append(out, step)
	}
	SortEscalation(out)
	return out
}

// TierOf is the service tier whose SLA policy applies to a ticket: the SLA
// of the ticket's affected service when it is a tier (standard, premium,
// enterprise), else the tier of the customer organization's plan
// (developer: standard; business: premium; enterprise and custom:
// enterprise). It is "" when neither says (only the policies for any tier
// apply then).
func TierOf(serviceSLA string, plan models.Plan) string {
	if sla := strings.ToLower(strings.TrimSpace(serviceSLA)); slices.Contains(Tiers(), sla) {
		return sla
	}
	switch plan {
	case models.PlanDeveloper:
		return TierStandard
	case models.PlanBusiness:
		return TierPremium
	case models.PlanEnterprise, models.PlanCustom:
		return TierEnterprise
	}
	return ""
}

// PolicyFor returns the SLA policy of tickets of a service tier and a
// category, with its calendar in the form of the business-time engine (nil
// when the policy has none). The first policy that exists wins, in this
// order:
//
//  1. (tier, category): the policy of exactly that tier and category;
//  2. (tier, ""): the tier's policy for any category;
//  3. ("", category): the category's policy for any tier;
//  4. ("", ""): the default policy (seeded).
//
// An empty tier or category skips the steps that name it. When no policy
// applies (the default one was deleted) it returns nil, nil, nil: the
// caller falls back on the category's targets.
func (s *Store) PolicyFor(ctx context.Context, tier, category string) (*SLAPolicy, *businesstime.Calendar, error) {
	tier, category = strings.TrimSpace(tier), strings.TrimSpace(category)
	var pols []SLAPolicy
	err := s.core.In(ctx, models.SystemScope()).Where("tier IN ? AND category IN ?", []string{tier, ""}, []string{category, ""}).Find(&pols).Error
	if err != nil {
		return nil, nil, dbErr(err)
	}
	var pick *SLAPolicy
	for _, want := range [][2]string{{tier, category}, {tier, ""}, {"", category}, {"", ""}} {
		if i := slices.IndexFunc(pols, func(p SLAPolicy) bool { return p.Tier == want[0] && p.Category == want[1] }); i >= 0 {
			pick = &pols[i]
			break
		}
	}
	if pick == nil {
		return nil, nil, nil
	}
	if err := s.loadTargets(ctx, []*SLAPolicy{pick}); err != nil {
		return nil, nil, err
	}
	if pick.CalendarID == "" {
		return pick, nil, nil
	}
	cal, err := s.calendar(ctx, pick.CalendarID)
	if err != nil {
		return nil, nil, err
	}
	return pick, cal.BusinessTime(), nil
}
