package portal

import (
	"net/url"
	"sort"

	"github.com/gofiber/fiber/v2"
	"github.com/telcoplatform/platform/models/eventlog"
	"github.com/telcoplatform/platform/models/operations"
)

// dashboardPage is what the dashboard shows.
type dashboardPage struct {
	Services      []any
	ServiceTotal  int
	ByStatus      []statusCount
	Operations    []any
	InProgress    int
	Tickets       []any // open tickets (nil without support:read)
	TicketTotal   int
	Invoices      []any // pending and overdue invoices (nil without billing:read)
	Budgets       []any
	Inbox         []eventlog.Inbox
	CanTickets    bool
	CanBilling    bool
	CanOperations bool
}

// statusCount is a number of services in a status.
type statusCount struct {
	Status string
	Count  int
}

// registerDashboard registers GET /portal (the sign-in page without a session).
func (p *Portal) registerDashboard(r fiber.Router) {
	r.Get("/", p.page(p.dashboard))
}

func (p *Portal) dashboard(c *fiber.Ctx, r *Request) error {
	d := dashboardPage{}
	s := r.Session
	if s.Can("services:read") {
		d.CanOperations = true
		list, err := r.API.Get("/services", url.Values{"limit": {"100"}, "sort": {"created_at:desc"}})
		if err != nil {
			return err
		}
		all := listOf(list, "services")
		d.ServiceTotal = int(num(obj(list["pagination"])["total"]))
		counts := map[string]int{}
		for _, sv := range all {
			counts[str(obj(sv)["status"])]++
		}
		for st, n := range counts {
			d.ByStatus = append(d.ByStatus, statusCount{st, n})
		}
		sort.Slice(d.ByStatus, func(i, j int) bool { return d.ByStatus[i].Status < d.ByStatus[j].Status })
		d.Services = all[:min(20, len(all))]
		ops, err := r.API.Get("/operations", url.Values{"limit": {"10"}})
		if err != nil {
			return err
		}
		d.Operations = listOf(ops, "operations")
		for _, op := range d.Operations {
			if !terminal(str(obj(op)["status"])) {
				d.InProgress++
			}
		}
	}
	if s.Can("support:read") {
		d.CanTickets = true
		t, err := r.API.Get("/support/tickets", url.Values{"limit": {"10"}, "status": {"open,in_progress,pending,escalated"}})
		if err != nil {
			return err
		}
		d.Tickets = listOf(t, "tickets")
		d.TicketTotal = int(num(obj(t["pagination"])["total"]))
	}
	if s.Can("billing:read") {
		d.CanBilling = true
		for _, status := range []string{"overdue", "pending"} {
			inv, err := r.API.Get("/billing/invoices", url.Values{"limit": {"10"}, "status": {status}})
			if err != nil {
				return err
			}
			d.Invoices = append(d.Invoices, listOf(inv, "invoices")...)
		}
		b, err := r.API.Get("/billing/budgets", nil)
		if err != nil {
			return err
		}
		d.Budgets = listOf(b, "budgets")
	}
	inbox, err := p.cfg.Sessions.Inbox(c.UserContext(), s)
	if err != nil {
		return err
	}
	d.Inbox = inbox
	return p.render(c, fiber.StatusOK, "dashboard", r, d)
}

// listOf returns the list under key of an API answer.
func listOf(m M, key string) []any {
	l, _ := m[key].([]any)
	return l
}

// obj reads a JSON object (nil for anything else).
func obj(v any) M {
	m, _ := v.(M)
	return m
}

// terminal reports whether an operation's status is final.
func terminal(status string) bool { return operations.OperationStatus(status).Terminal() }
