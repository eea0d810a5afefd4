package portal

import (
	"encoding/base64"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"
)

// The support area: the tickets of the session's organization (provider
// staff: every organization's, as the API answers), a ticket's page with
// its conversation and SLA clocks, new tickets and comments with
// attachments (forwarded to the API in base64; the API's size and type
// limits decide), escalation, feedback on a resolved ticket, and the
// knowledge-base suggestions the new-ticket form offers while the title is
// typed.

// maxAttachments is how many files one form forwards (the API's limit).
const maxAttachments = 10

// ticketsPage is the data of the tickets list.
type ticketsPage struct {
	Tickets []any
	Total   int
	Status  string // the status filter ("" every status)
	Staff   bool
	// Statuses are the filter's choices.
	Statuses []string
}

// ticketPage is the data of a ticket's page.
type ticketPage struct {
	Ticket   M
	Comments []any
	SLA      M // the live SLA status (GET .../sla)
	Feedback M // nil while none was given
	Staff    bool
	Notice   string
	Done     bool // resolved or closed: feedback is offered, escalation not
	Closed   bool // closed: no more comments
	// NextLevel is the escalation level the staff's form proposes.
	NextLevel int
	// Ratings are the feedback's choices.
	Ratings []int
}

// newTicketPage is the data of the new-ticket form.
type newTicketPage struct {
	Categories []any
	Staff      bool
	Error      string
	Form       map[string]string // the values typed, shown again after a refusal
	Priorities []string
	Severities []string
}

// staff reports whether the session is provider staff (their forms differ:
// the customer a ticket is for, escalation levels). The API decides what
// they may do.
func staff(s *Session) bool { return s.Role == "agent" || s.Role == "admin" }

// registerTickets registers the support area.
func (p *Portal) registerTickets(r fiber.Router) {
	r.Get("/tickets", p.page(p.ticketList))
	r.Get("/tickets/new", p.page(func(c *fiber.Ctx, r *Request) error {
		return p.newTicketForm(c, r, http.StatusOK, "", nil)
	}))
	r.Get("/tickets/knowledge", p.page(p.knowledgeSearch))
	r.Get("/tickets/knowledge/:id", p.page(func(c *fiber.Ctx, r *Request) error {
		a, err := r.API.Get("/support/knowledge/"+url.PathEscape(c.Params("id")), nil)
		if err != nil {
			return err
		}
		return p.render(c, http.StatusOK, "tickets_article", r, obj(a["article"]))
	}))
	r.Get("/tickets/attachments/:id", p.page(p.attachment))
	r.Post("/tickets", p.page(p.createTicket))
	r.Get("/tickets/:id", p.page(func(c *fiber.Ctx, r *Request) error {
		return p.ticket(c, r, http.StatusOK, p.takeNotice(c, r))
	}))
	r.Post("/tickets/:id/comments", p.page(p.addComment))
	r.Post("/tickets/:id/escalate", p.page(p.escalate))
	r.Post("/tickets/:id/feedback", p.page(p.feedback))
}

func (p *Portal) ticketList(c *fiber.Ctx, r *Request) error {
	ticketStatuses := []string{"open", "in_progress", "pending", "escalated", "resolved", "closed"}
	q := url.Values{"limit": {"50"}}
	status := c.Query("status")
	if status != "" && !slices.Contains(ticketStatuses, status) {
		status = ""
	}
	if status != "" {
		q.Set("status", status)
	}
	list, err := r.API.Get("/support/tickets", q)
	if err != nil {
		return err
	}
	return p.render(c, http.StatusOK, "tickets", r, ticketsPage{Tickets: listOf(list, "tickets"),
		Total: int(num(obj(list["pagination"])["total"])), Status: status, Staff: staff(r.Session), Statuses: ticketStatuses})
}

func (p *Portal) newTicketForm(c *fiber.Ctx, r *Request, status int, msg string, form map[string]string) error {
	cats, err := r.API.Get("/support/categories", nil)
	if err != nil {
		return err
	}
	if form == nil {
		form = map[string]string{"priority": "medium"}
	}
	return p.render(c, status, "tickets_new", r, newTicketPage{Categories: listOf(cats, "categories"), Staff: staff(r.Session), Error: msg, Form: form,
		Priorities: []string{"low", "medium", "high", "critical"}, Severities: []string{"outage", "business_impacting", "degraded", "minimal"}})
}

// knowledgeSearch answers the new-ticket form's script: the knowledge
// base's best articles for the words typed (JSON, at most five).
func (p *Portal) knowledgeSearch(c *fiber.Ctx, r *Request) error {
	q := strings.TrimSpace(c.Query("q"))
	out := []M{}
	if len(q) >= 3 {
		res, err := r.API.Get("/support/knowledge", url.Values{"q": {q}, "limit": {"5"}})
		if err != nil {
			return err
		}
		for _, a := range listOf(res, "articles") {
			o := obj(a)
			body := str(o["body"])
			if len(body) > 160 {
				body = body[:160] + "…"
			}
			out = append(out, M{"id": o["id"], "title": o["title"], "summary": body, "url": withEnv(r.Env, Path+"/tickets/knowledge/"+url.PathEscape(str(o["id"])))})
		}
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.JSON(M{"articles": out})
}

// splitCategory reads the form's "category/subcategory" choice.
func splitCategory(v string) (string, string) {
	cat, sub, _ := strings.Cut(v, "/")
	return cat, sub
}

func (p *Portal) createTicket(c *fiber.Ctx, r *Request) error {
	form := map[string]string{}
	for _, k := range []string{"title", "description", "category", "priority", "severity", "customer_id", "service_affected"} {
		form[k] = strings.TrimSpace(c.FormValue(k))
	}
	cat, sub := splitCategory(form["category"])
	body := M{"title": form["title"], "description": form["description"], "category": cat, "priority": form["priority"]}
	for k, v := range map[string]string{"subcategory": sub, "severity": form["severity"], "customer_id": form["customer_id"], "service_affected": form["service_affected"]} {
		if v != "" {
			body[k] = v
		}
	}
	atts, err := formAttachments(c)
	if err != nil {
		return p.newTicketForm(c, r, http.StatusBadRequest, err.Error(), form)
	}
	if len(atts) > 0 {
		body["attachments"] = atts
	}
	var out struct {
		Ticket struct {
			ID     string `json:"id"`
			Number string `json:"number"`
		} `json:"ticket"`
	}
	if err := r.API.Do(fiber.MethodPost, "/support/tickets", body, &out); err != nil {
		if e, ok := err.(*APIError); ok && refusal(e) {
			return p.newTicketForm(c, r, e.Status, errorMessage(err), form)
		}
		return err
	}
	return p.redirectNotice(c, r, Path+"/tickets/"+url.PathEscape(out.Ticket.ID), "Ticket "+out.Ticket.Number+" opened.")
}

// refusal reports whether an API refusal is about the form (shown with
// the form) rather than about the page (403, 404: their own pages).
func refusal(e *APIError) bool {
	return e.MFA == nil && e.Status >= 400 && e.Status < 500 && e.Status != http.StatusNotFound && e.Status != http.StatusForbidden && e.Status != http.StatusTooManyRequests
}

// formAttachments reads the form's files (field "attachments") as the
// API's base64 attachments.
func formAttachments(c *fiber.Ctx) ([]M, error) {
	mf, err := c.MultipartForm()
	if err != nil || mf == nil {
		return nil, nil // not multipart: no files
	}
	var out []M
	for _, fh := range mf.File["attachments"] {
		if fh.Filename == "" && fh.Size == 0 {
			continue // the empty file input of a form without a file
		}
		if len(out) == maxAttachments {
			return nil, fmt.Errorf("at most %d files can be attached at once", maxAttachments)
		}
		raw, err := readPart(fh)
		if err != nil {
			return nil, fmt.Errorf("the file %s could not be read", fh.Filename)
		}
		out = append(out, M{"filename": fh.Filename, "content_type": partType(fh, raw), "size": len(raw), "data": base64.StdEncoding.EncodeToString(raw)})
	}
	return out, nil
}

func readPart(fh *multipart.FileHeader) ([]byte, error) {
	f, err := fh.Open()
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	return io.ReadAll(f)
}

// partType is a file's media type: the browser's, else its extension's,
// else the one its first bytes suggest (a log file is text).
func partType(fh *multipart.FileHeader, raw []byte) string {
	ct, _, _ := mime.ParseMediaType(fh.Header.Get(fiber.HeaderContentType))
	if ct != "" && ct != "application/octet-stream" {
		return ct
	}
	if byExt, _, err := mime.ParseMediaType(mime.TypeByExtension(strings.ToLower(filepath.Ext(fh.Filename)))); err == nil {
		return byExt
	}
	sniffed, _, _ := mime.ParseMediaType(http.DetectContentType(raw))
	return sniffed
}

func (p *Portal) ticket(c *fiber.Ctx, r *Request, status int, notice string) error {
	id := url.PathEscape(c.Params("id"))
	t, err := r.API.Get("/support/tickets/"+id, nil)
	if err != nil {
		return err
	}
	comments, err := r.API.Get("/support/tickets/"+id+"/comments", url.Values{"limit": {"100"}})
	if err != nil {
		return err
	}
	sla, err := r.API.Get("/support/tickets/"+id+"/sla", nil)
	if err != nil {
		return err
	}
	tk := obj(t["ticket"])
	pg := ticketPage{Ticket: tk, Comments: listOf(comments, "comments"), SLA: obj(sla["sla_status"]), Staff: staff(r.Session), Notice: notice}
	pg.NextLevel, pg.Ratings = int(num(obj(pg.SLA["escalation"])["current_level"]))+1, []int{1, 2, 3, 4, 5}
	st := str(tk["status"])
	pg.Done, pg.Closed = st == "resolved" || st == "closed", st == "closed"
	if pg.Done {
		fb, err := r.API.Get("/support/tickets/"+id+"/feedback", nil)
		if err != nil {
			return err
		}
		pg.Feedback = obj(fb["feedback"])
	}
	return p.render(c, status, "tickets_ticket", r, pg)
}

func (p *Portal) addComment(c *fiber.Ctx, r *Request) error {
	id := c.Params("id")
	body := M{"content": strings.TrimSpace(c.FormValue("content"))}
	if staff(r.Session) && c.FormValue("visibility") == "internal" {
		body["visibility"] = "internal"
	}
	atts, err := formAttachments(c)
	if err != nil {
		return p.ticket(c, r, http.StatusBadRequest, err.Error())
	}
	if len(atts) > 0 {
		body["attachments"] = atts
	}
	if err := r.API.Do(fiber.MethodPost, "/support/tickets/"+url.PathEscape(id)+"/comments", body, nil); err != nil {
		if e, ok := err.(*APIError); ok && refusal(e) {
			return p.ticket(c, r, e.Status, "Your comment was not added: "+errorMessage(err))
		}
		return err
	}
	return p.redirectNotice(c, r, Path+"/tickets/"+url.PathEscape(id)+"#conversation", "Your comment was added.")
}

// escalate escalates a ticket: provider staff to the next level with a
// reason (the API's escalation); a customer raises the priority to
// critical with the reason as an update (which the API escalates).
func (p *Portal) escalate(c *fiber.Ctx, r *Request) error {
	id := url.PathEscape(c.Params("id"))
	reason := strings.TrimSpace(c.FormValue("reason"))
	var err error
	if staff(r.Session) {
		level, _ := strconv.Atoi(c.FormValue("level"))
		err = r.API.Do(fiber.MethodPost, "/support/tickets/"+id+"/escalate", M{"escalation_level": level, "reason": reason}, nil)
	} else {
		body := M{"priority": "critical"}
		if reason != "" {
			body["customer_update"] = "Escalation requested: " + reason
		}
		err = r.API.Do(fiber.MethodPatch, "/support/tickets/"+id, body, nil)
	}
	if err != nil {
		if e, ok := err.(*APIError); ok && refusal(e) {
			return p.ticket(c, r, e.Status, "The ticket was not escalated: "+errorMessage(err))
		}
		return err
	}
	return p.redirectNotice(c, r, Path+"/tickets/"+id, "The ticket was escalated.")
}

func (p *Portal) feedback(c *fiber.Ctx, r *Request) error {
	id := c.Params("id")
	rating, _ := strconv.Atoi(c.FormValue("rating"))
	body := M{"ticket_id": id, "rating": rating}
	if cm := strings.TrimSpace(c.FormValue("comment")); cm != "" {
		body["comment"] = cm
	}
	if err := r.API.Do(fiber.MethodPost, "/support/feedback", body, nil); err != nil {
		if e, ok := err.(*APIError); ok && refusal(e) {
			return p.ticket(c, r, e.Status, "Your feedback was not saved: "+errorMessage(err))
		}
		return err
	}
	return p.redirectNotice(c, r, Path+"/tickets/"+url.PathEscape(id), "Thank you for your feedback.")
}

// attachment relays an attachment's download from the API (which decides
// who may see it) with its type and file name.
func (p *Portal) attachment(c *fiber.Ctx, r *Request) error {
	rc, err := r.API.call(fiber.MethodGet, "/attachments/"+url.PathEscape(c.Params("id")), nil, "*/*", "")
	if err != nil {
		return err
	}
	res := &rc.Response
	if status := res.StatusCode(); status >= 400 {
		return decodeError(status, res.Body())
	}
	for _, h := range []string{fiber.HeaderContentType, fiber.HeaderContentDisposition} {
		c.Set(h, string(res.Header.Peek(h)))
	}
	c.Set("X-Content-Type-Options", "nosniff")
	c.Set(fiber.HeaderCacheControl, "private, no-store")
	c.Set("Content-Security-Policy", "default-src 'none'; sandbox")
	return c.Send(res.Body())
}
