package identity

import (
	"context"
	"time"

	"github.com/telcoplatform/platform/models"
)

// PrefixAudit starts authentication audit event ids.
const PrefixAudit = "aev"

// Authentication audit event types.
const (
	AuditLoginSucceeded  = "login.succeeded"
	AuditLoginFailed     = "login.failed"
	AuditTokenIssued     = "token.issued"
	AuditTokenRefused    = "token.refused"
	AuditTokenRevoked    = "token.revoked"
	AuditMFAChallenged   = "mfa.challenged"
	AuditMFAVerified     = "mfa.verified"
	AuditMFAFailed       = "mfa.failed"
	AuditMFAEnrolled     = "mfa.enrollment_started"
	AuditClientCreated   = "client.created"
	AuditCertRegistered  = "certificate.registered"
	AuditCredentialFails = "credential.refused"
	AuditLogout          = "logout"
	AuditMFACodeSent     = "mfa.code_sent"
	// AuditInvoiceVoided records provider staff cancelling an invoice
	// (session_id holds the invoice id, reason the staff member's reason).
	AuditInvoiceVoided = "invoice.voided"
)

// AuditEvent is one authentication event (spec section 5, Auditing):
// timestamp, event_type, user_id, client_id, ip_address, user_agent,
// authentication_method, token_type, scopes, session_id, plus the outcome.
type AuditEvent struct {
	ID                   string    `gorm:"primaryKey;size:40" json:"id"`
	CreatedAt            time.Time `gorm:"not null;index" json:"timestamp"`
	EventType            string    `gorm:"size:40;not null;index" json:"event_type"`
	OrganizationID       string    `gorm:"column:org_id;size:40;index" json:"organization_id,omitempty"` // not "organization_id": a system table, not tenant-scoped
	UserID               string    `gorm:"size:40;index" json:"user_id,omitempty"`
	ClientID             string    `gorm:"size:40" json:"client_id,omitempty"`
	IPAddress            string    `gorm:"size:64" json:"ip_address,omitempty"`
	UserAgent            string    `gorm:"size:300" json:"user_agent,omitempty"`
	AuthenticationMethod string    `gorm:"size:40" json:"authentication_method,omitempty"`
	TokenType            string    `gorm:"size:40" json:"token_type,omitempty"`
	Scopes               string    `gorm:"size:500" json:"scopes,omitempty"`
	SessionID            string    `gorm:"size:64" json:"session_id,omitempty"`
	Outcome              string    `gorm:"size:16;not null" json:"outcome"` // success or failure
	Reason               string    `gorm:"size:300" json:"reason,omitempty"`
}

// RecordAudit stores an authentication event (id and time filled in).
// Errors: INTERNAL_ERROR.
func (s *Store) RecordAudit(ctx context.Context, ev AuditEvent) error {
	ev.ID = models.NewID(PrefixAudit)
	ev.CreatedAt = s.Now()
	if ev.Outcome == "" {
		ev.Outcome = "success"
	}
	if len(ev.UserAgent) > 300 {
		ev.UserAgent = ev.UserAgent[:300]
	}
	if len(ev.Reason) > 300 {
		ev.Reason = ev.Reason[:300]
	}
	return models.DBErr(s.In(ctx, models.SystemScope()).Create(&ev).Error)
}

// AuditFilter narrows the audit list.
type AuditFilter struct {
	EventType      string
	UserID         string
	OrganizationID string
}

var auditSorts = models.SortFields{"created_at": "created_at", "timestamp": "created_at", "event_type": "event_type"}

// ListAuditEvents returns a page of audit events for provider administrators.
// Errors: INSUFFICIENT_PERMISSIONS, VALIDATION_ERROR, INTERNAL_ERROR.
func (s *Store) ListAuditEvents(ctx context.Context, p *models.Principal, f AuditFilter, page models.PageRequest) ([]AuditEvent, int64, error) {
	if !p.IsAdmin() {
		return nil, 0, models.Errorf(models.CodeInsufficientPermissions, "audit events are for provider administrators")
	}
	q := s.In(ctx, models.SystemScope()).Model(&AuditEvent{})
	if f.EventType != "" {
		q = q.Where("event_type = ?", f.EventType)
	}
	if f.UserID != "" {
		q = q.Where("user_id = ?", f.UserID)
	}
	if f.OrganizationID != "" {
		q = q.Where("org_id = ?", f.OrganizationID)
	}
	var out []AuditEvent
	total, err := models.Paginate(q, page, auditSorts, &out)
	return out, total, err
}
