package support

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/eventlog"
	"github.com/telcoplatform/platform/models/identity"
)

// The escalation rows of the clock's own notices (not ladder steps).
const (
	stepWarning = -2
	stepBreach  = -3
)

// advance records what became due on the running clocks by at: the
// warning (a notice to the assignee), the breach (sla.breach, and a credit
// request for a resolution breach of a ticket tied to a service) and the
// ladder steps whose instant has come.
func (sy *slaSync) advance(at time.Time) error {
	if err := sy.fireTimers(at); err != nil {
		return err
	}
	for _, c := range sy.clocks {
		if c.State != ClockRunning {
			continue
		}
		if c.WarnedAt == nil && c.WarnAt != nil && !c.WarnAt.After(at) {
			w := *c.WarnAt
			c.WarnedAt = &w
			msg := fmt.Sprintf("%s SLA of ticket %s reached %d%% of its %s target; due %s.", metricName(c.Metric), sy.t.Number,
				c.WarningPercent, FormatMinutes(c.TargetMinutes), stamp(c.DueAt))
			if err := sy.fire(c, stepWarning, 0, escalationWarningAction, w, LadderStep{Action: ActionNotifyAssignee}, msg); err != nil {
				return err
			}
		}
		if c.BreachedAt == nil && c.DueAt != nil && !c.DueAt.After(at) {
			b := *c.DueAt
			c.BreachedAt = &b
			data := sy.t.EventData()
			data["sla"] = map[string]any{"metric": c.Metric, "cycle": c.Cycle, "target": FormatMinutes(c.TargetMinutes),
				"due_at": models.Timestamp(b), "breached_at": models.Timestamp(b), "policy_id": c.PolicyID, "business_hours": c.BusinessHours}
			if err := sy.recordEvent(EventSLABreach, data); err != nil {
				return err
			}
			sy.breaches = append(sy.breaches, c.Metric)
		}
		for i, step := range sy.policy.Ladder {
			if step.Metric != c.Metric {
				continue
			}
			first := sy.stepTime(c, step)
			if first == nil || first.After(at) {
				continue
			}
			repeat := 0
			if step.RepeatEvery > 0 && sy.fired[firedKey(c.Metric, i, 0)] && !sy.acknowledged(c, i) {
				repeat = int(at.Sub(*first) / step.RepeatEvery)
			}
			if sy.fired[firedKey(c.Metric, i, repeat)] {
				continue
			}
			when := first.Add(time.Duration(repeat) * step.RepeatEvery)
			msg := fmt.Sprintf("%s SLA of ticket %s is at %d%% of its %s target (due %s).", metricName(c.Metric), sy.t.Number,
				step.AtPercent, FormatMinutes(c.TargetMinutes), stamp(c.DueAt))
			if err := sy.fire(c, i, repeat, step.Action, when, step, msg); err != nil {
				return err
			}
		}
	}
	return nil
}

// metricName is a metric's name in messages.
func metricName(m string) string {
	if m == MetricResponse {
		return "First-response"
	}
	return "Resolution"
}

// stepTime is the instant a ladder step first fires on c: when the clock
// reaches the step's share of its target, moved to the calendar's next
// working minute for a working-hours-only step (nil when c is not running).
func (sy *slaSync) stepTime(c *Clock, step LadderStep) *time.Time {
	at := c.when(step.AtPercent)
	if at == nil {
		return nil
	}
	if step.WorkingHoursOnly && c.Calendar != nil {
		w := c.Calendar.NextWorking(*at)
		at = &w
	}
	return at
}

// acknowledged reports whether provider staff changed the ticket after
// step i of c's metric first fired: its repeats stop.
func (sy *slaSync) acknowledged(c *Clock, i int) bool {
	first := sy.stepTime(c, sy.policy.Ladder[i])
	return sy.acked != nil && first != nil && sy.acked.After(*first)
}

// ladderTimes are the coming instants of c's ladder steps after now (the
// first firing of each unfired step, the next repeat of a fired one).
func (sy *slaSync) ladderTimes(c *Clock, now time.Time) []time.Time {
	var out []time.Time
	for i, step := range sy.policy.Ladder {
		if step.Metric != c.Metric {
			continue
		}
		first := sy.stepTime(c, step)
		if first == nil {
			continue
		}
		if !sy.fired[firedKey(c.Metric, i, 0)] {
			out = append(out, *first)
			continue
		}
		if step.RepeatEvery > 0 && !sy.acknowledged(c, i) {
			n := int(now.Sub(*first)/step.RepeatEvery) + 1
			out = append(out, first.Add(time.Duration(n)*step.RepeatEvery))
		}
	}
	return out
}

// fire performs one firing of a ladder step (or a warning notice), once:
// it records the escalation row, then acts.
func (sy *slaSync) fire(c *Clock, step, repeat int, action string, at time.Time, ls LadderStep, msg string) error {
	return sy.fireAt(c, c.Metric, step, repeat, action, at, ls, msg)
}

// act does what a ladder step says and describes what it did.
func (sy *slaSync) act(c *Clock, ls LadderStep, msg string) (string, error) {
	t := sy.t
	subject := fmt.Sprintf("[%s] %s SLA: %s", t.Number, metricName(c.Metric), t.Title)
	switch ls.Action {
	case ActionNotifyAssignee:
		u, err := sy.user(t.AssignedTo)
		if err != nil || u == nil {
			return "no assignee to notify", err
		}
		return sy.mail([]recipient{{u.Email, u.Name, "assignee"}}, subject, msg)
	case ActionNotifyTeamLead, ActionReassignTeamLead:
		lead, err := sy.teamLead()
		if err != nil || lead == nil {
			return "no team lead for category " + t.Category, err
		}
		if ls.Action == ActionReassignTeamLead && t.AssignedTo != lead.ID {
			ch := &change{tx: sy.tx, t: t, p: &models.Principal{ID: ActorSLA}, now: sy.now(), system: ActorSLA}
			old := t.AssignedTo
			ch.set("assigned_to", old, lead.ID, false, func() { t.AssignedTo = lead.ID })
			if err := ch.flush(); err != nil {
				return "", err
			}
		}
		d, err := sy.mail([]recipient{{lead.Email, lead.Name, "team_lead"}}, subject, msg)
		if ls.Action == ActionReassignTeamLead {
			d = "reassigned to " + lead.ID + "; " + d
		}
		return d, err
	case ActionPageDutyManager:
		to := recipientsOf(ls.Recipients, "duty_manager")
		if len(to) == 0 {
			admins, err := sy.dutyManagers()
			if err != nil {
				return "", err
			}
			to = admins
		}
		return sy.mail(to, "PAGE "+subject, msg)
	case ActionNotifyRecipients:
		return sy.mail(recipientsOf(ls.Recipients, "notify"), subject, msg)
	case ActionEscalate:
		ch := &change{tx: sy.tx, t: t, p: &models.Principal{ID: ActorSLA}, now: sy.now(), system: ActorSLA}
		if CanTransition(t.Status, StatusEscalated) {
			ch.set("status", t.Status, StatusEscalated, false, func() { t.Status = StatusEscalated })
		}
		reason := fmt.Sprintf("%s SLA at %d%% of its target", strings.ToLower(metricName(c.Metric)), ls.AtPercent)
		if ls.AtPercent == 0 { // a timer, not a ladder step: msg says why
			reason = msg
		}
		ch.escalate(models.Truncate(reason, MaxEscalationReason), t.EscalationLevel+1)
		if err := ch.flush(); err != nil {
			return "", err
		}
		return "escalated to level " + strconv.Itoa(t.EscalationLevel), nil
	}
	return "", nil
}

// now is the instant the sync's own changes are stamped with.
func (sy *slaSync) now() time.Time { return sy.s.now() }

// recipient is one person a ladder message goes to.
type recipient struct{ email, name, role string }

func recipientsOf(emails []string, role string) []recipient {
	out := make([]recipient, 0, len(emails))
	for _, e := range emails {
		out = append(out, recipient{email: e, role: role})
	}
	return out
}

// mail queues the message to each recipient (through the notification
// outbox, recorded on the ticket); nothing without SECRETS_KEY.
func (sy *slaSync) mail(to []recipient, subject, msg string) (string, error) {
	if sy.s.core.Sealer == nil || len(to) == 0 {
		return "no message sent", nil
	}
	var sent []string
	for _, r := range to {
		_, body, err := renderEmail(TemplateCustom, emailData{Ticket: sy.t, Name: r.name, Variables: map[string]string{"message": msg}}, subject)
		if err != nil {
			return "", err
		}
		m := eventlog.Message{Channel: eventlog.ChannelEmail, Recipient: r.email, Template: "support_sla_escalation", Subject: subject, Body: body, Role: "support"}
		if _, err := sy.s.queue(sy.tx, sy.t, m, NotifyRecipient{Email: r.email, Name: r.name, Role: r.role}, TriggerSLA, ActorSLA); err != nil {
			return "", err
		}
		sent = append(sent, r.email)
	}
	b, _ := json.Marshal(sent)
	return "mailed " + string(b), nil
}

// user returns the user id (nil when id is empty or unknown).
func (sy *slaSync) user(id string) (*identity.User, error) {
	if id == "" {
		return nil, nil
	}
	var u identity.User
	err := sy.s.core.In(sy.ctx, models.SystemScope()).Where("id = ?", id).Take(&u).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, nil
	}
	return &u, dbErr(err)
}

// teamLead is the lead of the team of the ticket's category: its first
// member (the earliest to join).
func (sy *slaSync) teamLead() (*identity.User, error) {
	team, err := sy.s.categoryTeam(sy.ctx, sy.t.Category)
	if err != nil || team == nil {
		return nil, err
	}
	var m TeamMember
	err = sy.s.core.In(sy.ctx, models.SystemScope()).Where("team_id = ?", team.ID).Order("created_at, user_id").Take(&m).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, dbErr(err)
	}
	return sy.user(m.UserID)
}

// dutyManagers are the provider's admins: who a page goes to when the
// step names no recipients.
func (sy *slaSync) dutyManagers() ([]recipient, error) {
	var users []identity.User
	err := sy.s.core.In(sy.ctx, models.SystemScope()).Where("role = ? AND email <> ''", models.RoleAdmin).
		Where("organization_id IN (?)", sy.s.core.In(sy.ctx, models.SystemScope()).Model(&models.Organization{}).Select("id").Where("provider = ?", true)).
		Order("created_at, id").Limit(5).Find(&users).Error
	if err != nil {
		return nil, dbErr(err)
	}
	out := make([]recipient, 0, len(users))
	for _, u := range users {
		out = append(out, recipient{u.Email, u.Name, "duty_manager"})
	}
	return out, nil
}
