package support

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/eventlog"
)

// Escalation rows of the routing rule's and the policy's timers.
const (
	timerMetric          = "timer"
	stepEscalateAfter    = -4
	stepAutoUpdate       = -5
	actionAutoUpdate     = "auto_update"
	TriggerAutoUpdate    = "auto_update"
	autoUpdateTemplateID = "support_auto_update"
)

// routingTimers are the timers a ticket gets from the routing rule that
// assigned it (escalate_after, auto_update_frequency) and from its
// policy's update_interval.
type routingTimers struct {
	EscalateAfter time.Duration
	UpdateEvery   time.Duration
}

// loadTimers finds the routing rule that assigned the ticket (the system
// actor of its first assignment) and combines its timers with the policy's
// update interval (the rule's auto_update_frequency wins when both are set).
func (sy *slaSync) loadTimers() error {
	sy.timers = routingTimers{UpdateEvery: time.Duration(sy.policy.UpdateMinutes) * time.Minute}
	var h HistoryEntry
	err := sy.tx.Where("ticket_id = ? AND field = ? AND actor_type = ? AND actor_id LIKE ?", sy.t.ID, "assigned_to", ActorSystem, PrefixRoutingRule+"_%").
		Order("created_at").Take(&h).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil
	}
	if err != nil {
		return dbErr(err)
	}
	var r RoutingRule
	err = sy.s.core.In(sy.ctx, models.SystemScope()).Where("id = ?", h.ActorID).Take(&r).Error
	if errors.Is(err, gorm.ErrRecordNotFound) { // the rule was deleted since: its timers go with it
		return nil
	}
	if err != nil {
		return dbErr(err)
	}
	sy.timers.EscalateAfter = time.Duration(r.EscalateAfterMinutes) * time.Minute
	if r.AutoUpdateMinutes > 0 {
		sy.timers.UpdateEvery = time.Duration(r.AutoUpdateMinutes) * time.Minute
	}
	return nil
}

// timerTimes are the instants of the timers after now: the escalation
// (once per cycle) and the next automatic update, while the cycle's
// resolution clock runs (not while the ticket is pending on the customer).
func (sy *slaSync) timerTimes(now time.Time) []time.Time {
	c := sy.clock(MetricResolution)
	if c == nil || c.State != ClockRunning {
		return nil
	}
	var out []time.Time
	if d := sy.timers.EscalateAfter; d > 0 && !sy.fired[firedKey(timerMetric, stepEscalateAfter, 0)] {
		out = append(out, c.StartedAt.Add(d))
	}
	if d := sy.timers.UpdateEvery; d > 0 {
		n := int(now.Sub(c.StartedAt)/d) + 1
		out = append(out, c.StartedAt.Add(time.Duration(n)*d))
	}
	return out
}

// fireTimers fires, at at, the routing rule's escalation when the ticket
// is still unresolved escalate_after into its cycle, and the latest due
// automatic update to the contact (skipped when staff posted a
// customer-visible comment within the interval).
func (sy *slaSync) fireTimers(at time.Time) error {
	c := sy.clock(MetricResolution)
	if c == nil || c.State != ClockRunning {
		return nil
	}
	if d := sy.timers.EscalateAfter; d > 0 && !c.StartedAt.Add(d).After(at) {
		msg := fmt.Sprintf("ticket %s is unresolved %s after it was opened (the routing rule's escalate_after)", sy.t.Number, FormatMinutes(int(d/time.Minute)))
		step := LadderStep{Action: ActionEscalate, AtPercent: 0}
		if sy.t.Status == StatusEscalated {
			step.Action = "" // already escalated: recorded, nothing more to do
		}
		if err := sy.fireAt(c, timerMetric, stepEscalateAfter, 0, ActionEscalate, c.StartedAt.Add(d), step, msg); err != nil {
			return err
		}
	}
	if d := sy.timers.UpdateEvery; d > 0 {
		n := int(at.Sub(c.StartedAt) / d)
		if n >= 1 && !sy.fired[firedKey(timerMetric, stepAutoUpdate, n)] {
			when := c.StartedAt.Add(time.Duration(n) * d)
			var recent int64
			err := sy.tx.Model(&Comment{}).Where("ticket_id = ? AND visibility = ? AND author_type = ? AND created_at > ?",
				sy.t.ID, VisibilityCustomer, "agent", when.Add(-d)).Count(&recent).Error
			if err != nil {
				return dbErr(err)
			}
			step := LadderStep{Action: actionAutoUpdate}
			if recent > 0 {
				step.Action = "" // staff updated the customer within the interval
			}
			msg := fmt.Sprintf("We are still working on ticket %s (status %s). We will keep you updated every %s.",
				sy.t.Number, strings.ReplaceAll(sy.t.Status, "_", " "), FormatMinutes(int(d/time.Minute)))
			if err := sy.fireAt(c, timerMetric, stepAutoUpdate, n, actionAutoUpdate, when, step, msg); err != nil {
				return err
			}
		}
	}
	return nil
}

// fireAt records one firing of a timer under metric and acts (act knows
// escalate; auto_update mails the contact; an empty action only records).
func (sy *slaSync) fireAt(c *Clock, metric string, step, repeat int, action string, at time.Time, ls LadderStep, msg string) error {
	key := firedKey(metric, step, repeat)
	if sy.fired[key] {
		return nil
	}
	sy.fired[key] = true
	detail := "nothing to do"
	switch ls.Action {
	case actionAutoUpdate:
		d, err := sy.autoUpdate(msg)
		if err != nil {
			return err
		}
		detail = d
	case "":
	default:
		d, err := sy.act(c, ls, msg)
		if err != nil {
			return err
		}
		detail = d
	}
	e := &Escalation{ID: models.NewID(PrefixEscalation), Tenant: sy.t.Tenant, TicketID: sy.t.ID, Cycle: c.Cycle, Metric: metric, Step: step,
		Repeat: repeat, Action: action, Level: sy.t.EscalationLevel, Reason: models.Truncate(msg, 500), Detail: models.Truncate(detail, 1000),
		ActorID: ActorSLA, FiredAt: at, CreatedAt: at}
	if err := sy.tx.Create(e).Error; err != nil {
		return dbErr(err)
	}
	sy.escalations = append(sy.escalations, SLAEscalation{Metric: metric, Action: action})
	return nil
}

// autoUpdate e-mails the ticket's contact an automatic status update.
func (sy *slaSync) autoUpdate(msg string) (string, error) {
	t := sy.t
	if t.Contact.Email == "" || sy.s.core.Sealer == nil {
		return "no contact e-mail", nil
	}
	subject := fmt.Sprintf("[%s] Status update: %s", t.Number, t.Title)
	_, body, err := renderEmail(TemplateCustom, emailData{Ticket: t, Name: t.Contact.Name, Variables: map[string]string{"message": msg}}, subject)
	if err != nil {
		return "", err
	}
	m := eventlog.Message{Channel: eventlog.ChannelEmail, Recipient: t.Contact.Email, Template: autoUpdateTemplateID, Subject: subject, Body: body, Role: "support"}
	if _, err := sy.s.queue(sy.tx, t, m, NotifyRecipient{Email: t.Contact.Email, Name: t.Contact.Name, Role: "contact"}, TriggerAutoUpdate, ActorSLA); err != nil {
		return "", err
	}
	return "mailed " + t.Contact.Email, nil
}
