package api

import (
	"context"
	"net"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/identity"
)

// AuditEventsOutput is the list of authentication audit events.
type AuditEventsOutput struct {
	Body struct {
		Envelope
		AuditEvents []AuditEventItem `json:"audit_events"`
		Pagination  Pagination       `json:"pagination"`
	}
}

// AuditEventItem is one authentication event (spec section 5, Auditing).
type AuditEventItem struct {
	ID                   string `json:"id"`
	Timestamp            string `json:"timestamp"`
	EventType            string `json:"event_type"`
	Outcome              string `json:"outcome" enum:"success,failure"`
	OrganizationID       string `json:"organization_id,omitempty"`
	UserID               string `json:"user_id,omitempty"`
	ClientID             string `json:"client_id,omitempty"`
	IPAddress            string `json:"ip_address,omitempty"`
	UserAgent            string `json:"user_agent,omitempty"`
	AuthenticationMethod string `json:"authentication_method,omitempty"`
	TokenType            string `json:"token_type,omitempty"`
	Scopes               string `json:"scopes,omitempty"`
	SessionID            string `json:"session_id,omitempty"`
	Reason               string `json:"reason,omitempty"`
}

type clientInfoKey struct{}

type clientInfo struct{ IP, UserAgent string }

func withClientInfo(ctx context.Context, ip, ua string) context.Context {
	return context.WithValue(ctx, clientInfoKey{}, clientInfo{IP: ip, UserAgent: ua})
}

// callerIP returns the client address that authenticate resolved for the
// request (forwarded headers only from trusted proxies), or "unknown".
func callerIP(ctx context.Context) string {
	if ci, ok := ctx.Value(clientInfoKey{}).(clientInfo); ok && ci.IP != "" {
		return ci.IP
	}
	return "unknown"
}

// audit records an authentication event; a failure to record is logged, never answered.
func (s *Server) audit(ctx context.Context, ev identity.AuditEvent) {
	if ci, ok := ctx.Value(clientInfoKey{}).(clientInfo); ok {
		if ev.IPAddress == "" {
			ev.IPAddress = ci.IP
		}
		if ev.UserAgent == "" {
			ev.UserAgent = ci.UserAgent
		}
	}
	if err := s.identity.RecordAudit(context.WithoutCancel(ctx), ev); err != nil {
		s.log.Error("recording an audit event failed", "event_type", ev.EventType, "error", err)
	}
}

// auditHTTP records an event of a raw net/http handler (OAuth, device pages).
func (s *Server) auditHTTP(r *http.Request, ev identity.AuditEvent) {
	if ev.IPAddress == "" && callerIP(r.Context()) == "unknown" { // authenticate resolved none (trusted proxies)
		if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
			ev.IPAddress = host
		}
	}
	if ev.UserAgent == "" {
		ev.UserAgent = r.UserAgent()
	}
	s.audit(r.Context(), ev)
}

func (s *Server) registerAudit() {
	register(s, huma.Operation{OperationID: "list-audit-events", Method: http.MethodGet, Path: "/auth/audit-events", Summary: "Authentication audit events",
		Description: "Sign-ins, token issuance and refusal, revocation, MFA, client and certificate registration, refused credentials; newest first. Filters: event_type, user_id, organization_id.",
		Tags:        []string{"Authentication"},
	}, access{admin: true}, func(ctx context.Context, in *struct {
		ListParams
		EventType      string `query:"event_type" maxLength:"40"`
		UserID         string `query:"user_id" maxLength:"40"`
		OrganizationID string `query:"organization_id" maxLength:"40"`
	}) (*AuditEventsOutput, error) {
		pr, err := in.page()
		if err != nil {
			return nil, err
		}
		rows, total, err := s.identity.ListAuditEvents(ctx, principal(ctx), identity.AuditFilter{EventType: in.EventType, UserID: in.UserID, OrganizationID: in.OrganizationID}, pr)
		if err != nil {
			return nil, err
		}
		out := &AuditEventsOutput{}
		out.Body.AuditEvents = make([]AuditEventItem, 0, len(rows))
		for _, e := range rows {
			out.Body.AuditEvents = append(out.Body.AuditEvents, AuditEventItem{ID: e.ID, Timestamp: models.Timestamp(e.CreatedAt), EventType: e.EventType, Outcome: e.Outcome,
				OrganizationID: e.OrganizationID, UserID: e.UserID, ClientID: e.ClientID, IPAddress: e.IPAddress, UserAgent: e.UserAgent,
				AuthenticationMethod: e.AuthenticationMethod, TokenType: e.TokenType, Scopes: e.Scopes, SessionID: e.SessionID, Reason: e.Reason})
		}
		out.Body.Pagination = newPagination(pr, total)
		return out, nil
	})
}
