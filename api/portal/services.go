package portal

import (
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
)

// periods are the metric periods a service page offers.
func periods() []string { return []string{"1h", "24h", "7d", "30d"} }

// servicesPage is the data of the services list.
type servicesPage struct {
	Services []any
	Total    int
	Status   string
	Type     string
	Search   string
	Statuses []string
}

// servicePage is the data of a service's page.
type servicePage struct {
	Service       M
	Health        M
	Period        string
	Periods       []string
	Charts        []chart
	Subscriptions []any
	Invoices      []any
	Incident      M
	CanWrite      bool
	CanBilling    bool
	Features      string
	Message       string
}

// registerServices registers the services list, a service's page and its actions.
func (p *Portal) registerServices(r fiber.Router) {
	r.Get("/services", p.page(p.servicesList))
	r.Get("/services/:id", p.page(p.serviceDetail))
	r.Post("/services/:id/scale", p.page(p.serviceAction(func(c *fiber.Ctx) (string, string, any) {
		body := M{"scaling_action": c.FormValue("scaling_action")}
		if bw := c.FormValue("new_bandwidth"); bw != "" {
			body["new_bandwidth"] = bw
		}
		if q := c.FormValue("new_quantity"); q != "" {
			body["new_quantity"] = int(num(parseNumber(q)))
		}
		return http.MethodPut, "/scaling", body
	})))
	r.Post("/services/:id/features", p.page(p.serviceAction(func(c *fiber.Ctx) (string, string, any) {
		return http.MethodPut, "/features", M{"features": splitList(c.FormValue("features"))}
	})))
	r.Post("/services/:id/maintenance", p.page(p.serviceAction(func(c *fiber.Ctx) (string, string, any) {
		body := M{"scaling_action": "scale_up", "new_bandwidth": c.FormValue("new_bandwidth")}
		if start, err := time.ParseInLocation("2006-01-02T15:04", c.FormValue("start"), time.UTC); err == nil {
			body["effective_date"] = start
			body["maintenance_window"] = M{"start": start, "duration": c.FormValue("duration")}
		}
		return http.MethodPut, "/scaling", body
	})))
	r.Post("/services/:id/decommission", p.page(p.serviceAction(func(c *fiber.Ctx) (string, string, any) {
		return http.MethodPost, "/decommission", M{"reason": c.FormValue("reason")}
	})))
}

func (p *Portal) servicesList(c *fiber.Ctx, r *Request) error {
	d := servicesPage{Status: c.Query("status"), Type: c.Query("type"), Search: c.Query("search"),
		Statuses: []string{"pending", "provisioning", "operational", "degraded", "maintenance", "suspended", "decommissioning", "decommissioned", "failed"}}
	q := url.Values{"limit": {"50"}, "sort": {"created_at:desc"}}
	for k, v := range map[string]string{"status": d.Status, "type": d.Type, "search": d.Search} {
		if v != "" {
			q.Set(k, v)
		}
	}
	list, err := r.API.Get("/services", q)
	if err != nil {
		return err
	}
	d.Services, d.Total = listOf(list, "services"), int(num(obj(list["pagination"])["total"]))
	return p.render(c, http.StatusOK, "services", r, d)
}

func (p *Portal) serviceDetail(c *fiber.Ctx, r *Request) error {
	id := url.PathEscape(c.Params("id"))
	sv, err := r.API.Get("/services/"+id, nil)
	if err != nil {
		return err
	}
	d := servicePage{Service: obj(sv["service"]), Periods: periods(), Period: "24h", CanWrite: r.Session.Can("services:write"), CanBilling: r.Session.Can("billing:read"),
		Message: p.takeNotice(c, r)}
	for _, per := range periods() {
		if c.Query("period") == per {
			d.Period = per
		}
	}
	d.Features = strings.Join(strs(d.Service["features"]), ", ")
	if d.Health, err = r.API.Get("/services/"+id+"/health", nil); err != nil {
		return err
	}
	d.Incident = obj(d.Health["open_incident"])
	m, err := r.API.Get("/services/"+id+"/metrics", url.Values{"period": {d.Period}})
	if err != nil {
		return err
	}
	points := listOf(m, "metrics")
	d.Charts = []chart{
		lineChart("chart-latency", "Latency", "ms", "latency_ms", points),
		lineChart("chart-utilisation", "Bandwidth utilisation", "%", "bandwidth_utilization", points),
		lineChart("chart-loss", "Packet loss", "%", "packet_loss", points),
	}
	if d.CanBilling {
		subs, err := r.API.Get("/billing/subscriptions", url.Values{"service_id": {c.Params("id")}})
		if err != nil {
			return err
		}
		d.Subscriptions = listOf(subs, "subscriptions")
		ids := map[string]bool{}
		for _, s := range d.Subscriptions {
			ids[str(obj(s)["id"])] = true
		}
		if len(ids) > 0 {
			inv, err := r.API.Get("/billing/invoices", url.Values{"limit": {"100"}})
			if err != nil {
				return err
			}
			for _, i := range listOf(inv, "invoices") { // the invoices of the service's subscriptions
				if ids[str(obj(i)["subscription_id"])] {
					d.Invoices = append(d.Invoices, i)
				}
			}
		}
	}
	return p.render(c, http.StatusOK, "service", r, d)
}

// serviceAction starts a change of the service (method and path under
// /services/{id} with a body built from the form) and sends the browser
// to the operation's page.
func (p *Portal) serviceAction(build func(c *fiber.Ctx) (method, suffix string, body any)) handler {
	return func(c *fiber.Ctx, r *Request) error {
		method, suffix, body := build(c)
		var acc M
		if err := r.API.Do(method, "/services/"+url.PathEscape(c.Params("id"))+suffix, body, &acc); err != nil {
			return err
		}
		return p.followOperation(c, r, acc)
	}
}

// followOperation redirects to the page of the operation an API answer
// started (or back to the service when the change was immediate).
func (p *Portal) followOperation(c *fiber.Ctx, r *Request, acc M) error {
	if id := str(acc["request_id"]); id != "" {
		return c.Redirect(withEnv(r.Env, Path+"/operations/"+url.PathEscape(id)), http.StatusSeeOther)
	}
	return p.redirectNotice(c, r, Path+"/services/"+url.PathEscape(c.Params("id")), "Saved.")
}

// parseNumber reads a form's number (0 when it is not one).
func parseNumber(s string) any {
	var f float64
	for _, ch := range strings.TrimSpace(s) {
		if ch < '0' || ch > '9' {
			return 0.0
		}
		f = f*10 + float64(ch-'0')
	}
	return f
}
