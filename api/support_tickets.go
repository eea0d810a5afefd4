package api

import (
	"context"
	"net/http"
	"slices"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/support"
)

// TicketContact is who the provider talks to about a ticket.
type TicketContact struct {
	Name  string `json:"name,omitempty" maxLength:"200" example:"Jane Operator"`
	Email string `json:"email,omitempty" maxLength:"320" example:"noc@example.com" doc:"A bare e-mail address"`
	Phone string `json:"phone,omitempty" maxLength:"40" example:"+1 555 0100"`
	Role  string `json:"role,omitempty" maxLength:"64" example:"network_admin"`
}

// TicketLocation is where the problem is.
type TicketLocation struct {
	SiteID   string `json:"site_id,omitempty" maxLength:"64" example:"site-nyc-01"`
	Address  string `json:"address,omitempty" maxLength:"500"`
	Timezone string `json:"timezone,omitempty" maxLength:"64" example:"America/New_York" doc:"An IANA time zone name"`
}

// AttachmentBody is an inline attachment of a ticket or a comment: the
// file's content in base64.
type AttachmentBody struct {
	Filename    string `json:"filename,omitempty" maxLength:"255" doc:"Required; sanitised (path and unusual characters dropped)" example:"traceroute.txt"`
	ContentType string `json:"content_type,omitempty" maxLength:"100" doc:"Required; one of the allowed types (docs/support.md)" example:"text/plain"`
	Size        *int64 `json:"size,omitempty" minimum:"0" doc:"Optional: the decoded size in bytes, checked when given"`
	Data        string `json:"data,omitempty" doc:"The content in base64 (standard alphabet); at most 10 MiB decoded"`
	Content     string `json:"content,omitempty" doc:"Alias of data (data wins when both are sent)"`
}

// TicketBody is the body of a new ticket.
type TicketBody struct {
	Title           string           `json:"title,omitempty" maxLength:"200" doc:"Required unless its alias subject is given" example:"Intermittent packet loss on the NYC circuit"`
	Subject         string           `json:"subject,omitempty" maxLength:"200" doc:"Alias of title"`
	Description     string           `json:"description,omitempty" required:"true" minLength:"1" maxLength:"10000" doc:"Required" example:"Since 09:00 about 5% packet loss towards the data centre."`
	CustomerID      string           `json:"customer_id,omitempty" maxLength:"64" doc:"The customer (cust_) the ticket is for: the caller's own by default; provider staff must give one"`
	Contact         *TicketContact   `json:"contact,omitempty"`
	Category        string           `json:"category,omitempty" required:"true" maxLength:"40" doc:"Required: one of GET /v1/support/categories (network, voice, cloud, security, billing, ai, general)" example:"network"`
	Subcategory     string           `json:"subcategory,omitempty" maxLength:"40" doc:"One of the category's subcategories" example:"connectivity"`
	Priority        string           `json:"priority,omitempty" enum:"low,medium,high,critical" maxLength:"16" doc:"low, medium, high or critical; default: the category's default priority" example:"high"`
	Severity        string           `json:"severity,omitempty" enum:"outage,business_impacting,degraded,minimal" maxLength:"32" doc:"outage, business_impacting, degraded or minimal" example:"business_impacting"`
	ServiceAffected string           `json:"service_affected,omitempty" maxLength:"64" example:"svc_3fK9aZ"`
	Location        *TicketLocation  `json:"location,omitempty"`
	Metadata        map[string]any   `json:"metadata,omitempty" doc:"Free-form; at most 50 keys and 8 KiB of JSON"`
	Attachments     []AttachmentBody `json:"attachments,omitempty" maxItems:"10" doc:"Files in base64: at most 10, each at most 10 MiB decoded, the whole body at most 15 MiB"`
}

// TicketAgent is the agent a ticket is assigned to.
type TicketAgent struct {
	_              struct{} `nullable:"true"` // answered as null where there is none
	AgentID        string   `json:"agent_id"`
	Name           string   `json:"name"`
	Email          string   `json:"email"`
	Specialization string   `json:"specialization,omitempty"`
}

// TicketSLA is a ticket's SLA policy and where it stands.
type TicketSLA struct {
	ResponseTime     string `json:"response_time" example:"1h"`
	ResolutionTime   string `json:"resolution_time" example:"8h"`
	ResponseDue      string `json:"response_due"`
	ResolutionDue    string `json:"resolution_due"`
	ResponseMet      bool   `json:"response_met" doc:"A provider response came within response_time"`
	Escalated        bool   `json:"escalated"`
	EscalationLevel  int    `json:"escalation_level"`
	EscalationReason string `json:"escalation_reason,omitempty"`
}

// TicketSLAStatus is the SLA summary of a list item.
type TicketSLAStatus struct {
	ResponseMet   bool   `json:"response_met"`
	ResolutionDue string `json:"resolution_due"`
	TimeRemaining string `json:"time_remaining" doc:"Until resolution_due, in hours and minutes; negative when overdue, 0m once resolved or closed" example:"7h42m"`
}

// TicketURLs are a ticket's addresses.
type TicketURLs struct {
	Self           string `json:"self"`
	CustomerPortal string `json:"customer_portal"`
}

// TicketItem is a support ticket.
type TicketItem struct {
	ID                  string           `json:"id" example:"tkt_3fK9aZ"`
	Number              string           `json:"number" example:"TKT-000123"`
	Title               string           `json:"title"`
	Description         string           `json:"description"`
	Status              string           `json:"status" enum:"open,in_progress,pending,escalated,resolved,closed"`
	Priority            string           `json:"priority" enum:"low,medium,high,critical"`
	Severity            string           `json:"severity,omitempty"`
	Category            string           `json:"category"`
	Subcategory         string           `json:"subcategory,omitempty"`
	ServiceAffected     string           `json:"service_affected,omitempty"`
	CustomerID          string           `json:"customer_id"`
	AssignedTo          *TicketAgent     `json:"assigned_to" doc:"null until the ticket is assigned"`
	Contact             TicketContact    `json:"contact"`
	Location            TicketLocation   `json:"location"`
	Metadata            map[string]any   `json:"metadata" doc:"The ticket's free-form metadata, plus root_cause and vendor_ticket once provider staff set them"`
	SLA                 TicketSLA        `json:"sla"`
	EstimatedResolution *string          `json:"estimated_resolution"`
	RootCause           string           `json:"root_cause,omitempty" doc:"The same as metadata.root_cause (kept for compatibility)"`
	VendorTicket        string           `json:"vendor_ticket,omitempty" doc:"The same as metadata.vendor_ticket (kept for compatibility)"`
	InternalNotes       string           `json:"internal_notes,omitempty" doc:"Provider staff only"`
	URLs                TicketURLs       `json:"urls"`
	SLAStatus           *TicketSLAStatus `json:"sla_status,omitempty" doc:"List items only"`
	CreatedAt           string           `json:"created_at"`
	UpdatedAt           string           `json:"updated_at"`
	ResolvedAt          *string          `json:"resolved_at"`
	ClosedAt            *string          `json:"closed_at"`

	// Attachments are the files sent with the ticket.
	Attachments []CommentAttachment `json:"attachments" doc:"The files sent with the ticket"`
}

// ticketItem converts a ticket for the caller p (internal notes for staff only).
func (s *Server) ticketItem(p *models.Principal, t *support.Ticket) TicketItem {
	it := TicketItem{ID: t.ID, Number: t.Number, Title: t.Title, Description: t.Description, Status: t.Status, Priority: t.Priority,
		Severity: t.Severity, Category: t.Category, Subcategory: t.Subcategory, ServiceAffected: t.ServiceAffected, CustomerID: t.CustomerID,
		Contact:  TicketContact{Name: t.Contact.Name, Email: t.Contact.Email, Phone: t.Contact.Phone, Role: t.Contact.Role},
		Location: TicketLocation{SiteID: t.Location.SiteID, Address: t.Location.Address, Timezone: t.Location.Timezone},
		Metadata: t.MetadataView(),
		SLA: TicketSLA{ResponseTime: support.FormatMinutes(t.SLAResponseMinutes), ResolutionTime: support.FormatMinutes(t.SLAResolutionMinutes),
			ResponseDue: models.Timestamp(t.ResponseDue), ResolutionDue: models.Timestamp(t.ResolutionDue), ResponseMet: t.ResponseMet(),
			Escalated: t.Escalated, EscalationLevel: t.EscalationLevel, EscalationReason: t.EscalationReason},
		EstimatedResolution: optTimestamp(t.EstimatedResolution), RootCause: t.RootCause, VendorTicket: t.VendorTicket,
		URLs:      TicketURLs{Self: s.cfg.PublicBaseURL + "/v1/support/tickets/" + t.ID, CustomerPortal: s.cfg.PublicBaseURL + "/portal/tickets/" + t.ID},
		CreatedAt: models.Timestamp(t.CreatedAt), UpdatedAt: models.Timestamp(t.UpdatedAt),
		ResolvedAt: optTimestamp(t.ResolvedAt), ClosedAt: optTimestamp(t.ClosedAt), Attachments: s.attachmentItems(t.Attachments)}
	if t.Agent != nil {
		it.AssignedTo = &TicketAgent{AgentID: t.Agent.ID, Name: t.Agent.Name, Email: t.Agent.Email, Specialization: t.Specialization}
	}
	if p.IsStaff() {
		it.InternalNotes = t.InternalNotes
	}
	return it
}

// ticketListItem is ticketItem with its sla_status.
func (s *Server) ticketListItem(p *models.Principal, t *support.Ticket) TicketItem {
	it := s.ticketItem(p, t)
	left := t.TimeRemaining(s.now())
	it.SLAStatus = &TicketSLAStatus{ResponseMet: t.ResponseMet(), ResolutionDue: models.Timestamp(t.ResolutionDue), TimeRemaining: formatRemaining(left)}
	return it
}

// formatRemaining writes a duration in hours and minutes ("7h42m", "-1h5m", "0m").
func formatRemaining(d time.Duration) string {
	sign := ""
	if d < 0 {
		sign, d = "-", -d
	}
	m := int(d / time.Minute)
	if m == 0 {
		return "0m"
	}
	return sign + support.FormatMinutes(m)
}

// TicketOutput wraps one ticket.
type TicketOutput struct {
	Status int
	Body   struct {
		Envelope
		Ticket TicketItem `json:"ticket"`
	}
}

// TicketPagination is the pagination of ticket lists: the platform's
// standard object plus `limit`, the name ticket lists use for per_page.
type TicketPagination struct {
	Pagination
	Limit int `json:"limit" doc:"Items per page (same as per_page)"`
}

// TicketsOutput is a page of tickets.
type TicketsOutput struct {
	Body struct {
		Envelope
		Tickets    []TicketItem     `json:"tickets"`
		Pagination TicketPagination `json:"pagination"`
	}
}

// TicketUpdateMetadata is the metadata of a ticket update (provider staff).
type TicketUpdateMetadata struct {
	RootCause       *string `json:"root_cause,omitempty" maxLength:"2000"`
	EscalationLevel *int    `json:"escalation_level,omitempty" minimum:"0" maximum:"5" doc:"0 to 5, not below the ticket's current level (400 VALIDATION_ERROR); raising it escalates the ticket"`
	VendorTicket    *string `json:"vendor_ticket,omitempty" maxLength:"100"`
}

// TicketUpdateBody is the body of a ticket update; absent fields are unchanged.
type TicketUpdateBody struct {
	Status              *string               `json:"status,omitempty" maxLength:"16" doc:"A move allowed by the transition table (docs/support.md); customers may only reopen a resolved ticket (open) or close one"`
	Priority            *string               `json:"priority,omitempty" maxLength:"16" doc:"low, medium, high or critical; raising it to critical escalates the ticket"`
	AssignedTo          *string               `json:"assigned_to,omitempty" maxLength:"64" doc:"Provider staff: an agent's user id (usr_), or empty to unassign"`
	EstimatedResolution *string               `json:"estimated_resolution,omitempty" maxLength:"40" doc:"Provider staff: RFC 3339 timestamp"`
	InternalNotes       *string               `json:"internal_notes,omitempty" maxLength:"10000" doc:"Provider staff: never shown to customers"`
	CustomerUpdate      *string               `json:"customer_update,omitempty" maxLength:"10000" doc:"Becomes a customer-visible comment"`
	Metadata            *TicketUpdateMetadata `json:"metadata,omitempty" doc:"Provider staff"`
}

func (b *TicketUpdateBody) input() support.UpdateInput {
	in := support.UpdateInput{Status: b.Status, Priority: b.Priority, AssignedTo: b.AssignedTo, EstimatedResolution: b.EstimatedResolution,
		InternalNotes: b.InternalNotes, CustomerUpdate: b.CustomerUpdate}
	if b.Metadata != nil {
		in.RootCause, in.EscalationLevel, in.VendorTicket = b.Metadata.RootCause, b.Metadata.EscalationLevel, b.Metadata.VendorTicket
	}
	return in
}

// TicketPath names a ticket in the path.
type TicketPath struct {
	ID string `path:"ticket_id" maxLength:"64" example:"tkt_3fK9aZ"`
}

// TicketListParams are the filters of the ticket list.
type TicketListParams struct {
	CustomerID      string `query:"customer_id" maxLength:"64" doc:"Tickets of this customer (cust_); provider staff see every customer's"`
	Status          string `query:"status" maxLength:"200" doc:"Comma-separated statuses" example:"open,escalated"`
	Priority        string `query:"priority" maxLength:"100" doc:"Comma-separated priorities" example:"high,critical"`
	Category        string `query:"category" maxLength:"40" doc:"One of the categories (GET /v1/support/categories); another is 400 VALIDATION_ERROR" example:"network"`
	AssignedTo      string `query:"assigned_to" maxLength:"64" doc:"An agent's user id"`
	CreatedAfter    string `query:"created_after" maxLength:"40" doc:"RFC 3339 timestamp"`
	Filter          string `query:"filter" maxLength:"2000" doc:"A filter expression (docs/filtering.md) over status, priority (by rank), category, subcategory, customer_id, assigned_to, created_at, updated_at, resolved_at, escalation_level and title (~ contains); combined with the other filters by and. A malformed one is 400 VALIDATION_ERROR with details.position, the 0-based character offset of the fault" example:"status in (open, escalated) and priority >= high"`
	BreachingWithin string `query:"breaching_within" maxLength:"20" doc:"Tickets whose next SLA target (first response or resolution, running and not yet breached) is due within this duration, in whole minutes: 30m, 2h, 1h30m. Answered from the stored next-breach times; sort=sla_next_breach_at:asc lists the most urgent first" example:"30m"`
	ListParams
}

// registerSupport registers the support area: categories, ticket search,
// tickets, comments, routing rules, knowledge base and feedback, SLA
// policies and business calendars.
func (s *Server) registerSupport() {
	tags := []string{"Support"}
	s.registerSupportCategories(tags)
	s.registerSupportCategoryAdmin(tags)
	s.registerSupportSearch(tags) // fixed /support/tickets/search before /support/tickets/{ticket_id}
	s.registerSupportTickets(tags)
	s.registerSupportComments(tags)
	s.registerSupportRouting(tags)
	s.registerSupportKnowledge(tags)
	s.registerSupportNotifications(tags)
	s.registerSupportAttachments(tags)
	s.registerSupportSLA(tags)
	s.registerSupportTicketSLA(tags)
	s.registerSupportDashboard(tags)
	s.registerSupportIntegrations(tags)
	s.registerSupportTracker(tags)
	s.registerSupportReports(tags)
}

// registerSupportTickets registers ticket creation, reading, listing,
// updating and history.
func (s *Server) registerSupportTickets(tags []string) {
	register(s, huma.Operation{OperationID: "create-support-ticket", Method: http.MethodPost, Path: "/support/tickets", Summary: "Open a support ticket",
		Description: "Opens a ticket (status open, number TKT-nnnnnn) with the SLA targets of its category and priority, and writes ticket.created. " +
			"Every field is validated (docs/support.md). Attachments (base64) go to the blob store: each at most 10 MiB decoded (413 above), of an allowed type.",
		Tags: tags, DefaultStatus: http.StatusCreated, MaxBodyBytes: MaxAttachmentBody},
		access{permission: support.PermissionCreate}, func(ctx context.Context, in *struct{ Body TicketBody }) (*TicketOutput, error) {
			b := in.Body
			ti := support.TicketInput{Title: b.Title, Subject: b.Subject, Description: b.Description, CustomerID: b.CustomerID, Category: b.Category,
				Subcategory: b.Subcategory, Priority: b.Priority, Severity: b.Severity, ServiceAffected: b.ServiceAffected, Metadata: b.Metadata,
				Attachments: attachmentInputs(b.Attachments)}
			if b.Contact != nil {
				ti.Contact = support.Contact{Name: b.Contact.Name, Email: b.Contact.Email, Phone: b.Contact.Phone, Role: b.Contact.Role}
			}
			if b.Location != nil {
				ti.Location = support.Location{SiteID: b.Location.SiteID, Address: b.Location.Address, Timezone: b.Location.Timezone}
			}
			p := principal(ctx)
			t, err := s.support.CreateTicket(ctx, p, ti)
			if err != nil {
				return nil, err
			}
			s.syncSLA(ctx, t)
			out := &TicketOutput{Status: http.StatusCreated}
			out.Body.Ticket = s.ticketItem(p, t)
			return out, nil
		})
	register(s, huma.Operation{OperationID: "list-support-tickets", Method: http.MethodGet, Path: "/support/tickets", Summary: "List support tickets",
		Description: "The caller's organization's tickets (provider staff: every organization's), newest first, each with its sla_status. " +
			"Sortable by created_at, updated_at, priority (by rank), status (in lifecycle order), number. " +
			"filter= takes an expression of the filter language (docs/filtering.md).", Tags: tags},
		access{permission: support.PermissionRead}, func(ctx context.Context, in *TicketListParams) (*TicketsOutput, error) {
			pr, err := in.page()
			if err != nil {
				return nil, err
			}
			p := principal(ctx)
			f := support.TicketFilter{CustomerID: in.CustomerID, Status: splitList(in.Status), Priority: splitList(in.Priority), Category: in.Category,
				AssignedTo: in.AssignedTo, CreatedAfter: in.CreatedAfter, BreachingWithin: in.BreachingWithin, Expr: in.Filter}
			rows, total, err := s.support.ListTickets(ctx, p, f, pr)
			if err != nil {
				return nil, err
			}
			return s.ticketsOutput(p, rows, pr, total), nil
		})
	register(s, huma.Operation{OperationID: "get-support-ticket", Method: http.MethodGet, Path: "/support/tickets/{ticket_id}", Summary: "Get a support ticket", Tags: tags},
		access{permission: support.PermissionRead}, func(ctx context.Context, in *TicketPath) (*TicketOutput, error) {
			p := principal(ctx)
			t, err := s.support.GetTicket(ctx, p, in.ID)
			if err != nil {
				return nil, err
			}
			out := &TicketOutput{Status: http.StatusOK}
			out.Body.Ticket = s.ticketItem(p, t)
			return out, nil
		})
	update := func(ctx context.Context, in *struct {
		TicketPath
		Body TicketUpdateBody
	}) (*TicketOutput, error) {
		p := principal(ctx)
		res, err := s.support.UpdateTicket(ctx, p, in.ID, in.Body.input())
		if err != nil {
			return nil, err
		}
		if slices.Contains(res.Events, support.EventTicketResolved) {
			s.startAutoClose(ctx, res.Ticket)
		}
		if slices.Contains(res.Changed, "priority") {
			// A new priority re-times the clocks: they are synced here, so
			// that this answer (and a GET right after it) carries the new
			// targets and due times; the workflow's own sync then finds
			// nothing left to replay.
			s.resyncSLA(ctx, p, res)
		}
		if len(res.Changed) > 0 {
			s.syncSLA(ctx, res.Ticket)
		}
		out := &TicketOutput{Status: http.StatusOK}
		out.Body.Ticket = s.ticketItem(p, res.Ticket)
		return out, nil
	}
	updateDoc := "Applies the fields sent: status (along the transition table; 409 INVALID_STATE_TRANSITION otherwise), priority (raising it to critical " +
		"escalates the ticket: sla.escalated, sla.escalation_reason, ticket.escalated), and, for provider staff, assigned_to, estimated_resolution, " +
		"internal_notes and metadata; customer_update becomes a customer-visible comment. Every change is kept in the history; writes ticket.updated " +
		"(its changes never name internal_notes, and an update of the internal notes alone writes none) and ticket.resolved when resolving. Customers may only reopen a resolved ticket or close one, change the priority and add a customer_update."
	register(s, huma.Operation{OperationID: "update-support-ticket", Method: http.MethodPut, Path: "/support/tickets/{ticket_id}", Summary: "Update a support ticket",
		Description: updateDoc, Tags: tags}, access{permission: support.PermissionWrite}, update)
	register(s, huma.Operation{OperationID: "patch-support-ticket", Method: http.MethodPatch, Path: "/support/tickets/{ticket_id}", Summary: "Update a support ticket (PATCH)",
		Description: "The same as PUT: only the fields sent change. " + updateDoc, Tags: tags}, access{permission: support.PermissionWrite}, update)
	register(s, huma.Operation{OperationID: "list-support-ticket-history", Method: http.MethodGet, Path: "/support/tickets/{ticket_id}/history", Summary: "A ticket's history",
		Description: "Every status and field change of the ticket, oldest first (customers do not see changes of internal notes).", Tags: tags},
		access{permission: support.PermissionRead}, func(ctx context.Context, in *struct {
			TicketPath
			ListParams
		}) (*TicketHistoryOutput, error) {
			pr, err := in.page()
			if err != nil {
				return nil, err
			}
			rows, total, err := s.support.TicketHistory(ctx, principal(ctx), in.ID, pr)
			if err != nil {
				return nil, err
			}
			out := &TicketHistoryOutput{}
			out.Body.History = mapSlice(rows, historyItem)
			out.Body.Pagination = newPagination(pr, total)
			return out, nil
		})
}

// TicketHistoryItem is one change of a ticket.
type TicketHistoryItem struct {
	ID        string    `json:"id" example:"hist_3fK9aZ"`
	TicketID  string    `json:"ticket_id"`
	Field     string    `json:"field" example:"status"`
	OldValue  string    `json:"old_value"`
	NewValue  string    `json:"new_value"`
	Actor     ActorItem `json:"actor"`
	CreatedAt string    `json:"created_at"`
}

// ActorItem is who made a change or wrote a comment.
type ActorItem struct {
	Type  string `json:"type" enum:"customer,agent,system" doc:"system: the platform itself (id: the routing rule that assigned a new ticket)"`
	ID    string `json:"id"`
	Name  string `json:"name,omitempty"`
	Email string `json:"email,omitempty"`
}

func historyItem(h *support.HistoryEntry) TicketHistoryItem {
	return TicketHistoryItem{ID: h.ID, TicketID: h.TicketID, Field: h.Field, OldValue: h.OldValue, NewValue: h.NewValue,
		Actor: ActorItem{Type: h.ActorType, ID: h.ActorID}, CreatedAt: models.Timestamp(h.CreatedAt)}
}

// TicketHistoryOutput is a page of a ticket's history.
type TicketHistoryOutput struct {
	Body struct {
		Envelope
		History    []TicketHistoryItem `json:"history"`
		Pagination Pagination          `json:"pagination"`
	}
}

// ticketsOutput is the answer of the ticket list and the ticket search: a
// page of tickets as p may see them, with their pagination.
func (s *Server) ticketsOutput(p *models.Principal, rows []support.Ticket, pr models.PageRequest, total int64) *TicketsOutput {
	out := &TicketsOutput{}
	out.Body.Tickets = make([]TicketItem, len(rows))
	for i := range rows {
		out.Body.Tickets[i] = s.ticketListItem(p, &rows[i])
	}
	out.Body.Pagination = TicketPagination{Pagination: newPagination(pr, total), Limit: pr.Limit}
	return out
}
