// Package support is the support area's domain: categories with their SLA
// targets, tickets (with their lifecycle, SLA policy, escalation and
// history) and comments. It builds on the core models package: tenancy
// scopes, validation, errors, identifiers and the event outbox.
package support

import (
	"context"
	"errors"
	"time"

	_ "time/tzdata" // location.timezone is checked against the IANA database, whatever the host has

	"gocloud.dev/blob"
	"gorm.io/gorm"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/eventlog"
	"github.com/telcoplatform/platform/models/identity"
)

// Permissions of the support area.
const (
	PermissionRead   = "support:read"
	PermissionCreate = "support:create"
	PermissionWrite  = "support:write"
	PermissionAdmin  = "support:admin"
)

// Event names written by this package (the webhooks catalogue lists them).
const (
	EventTicketCreated   = "ticket.created"
	EventTicketUpdated   = "ticket.updated"
	EventTicketResolved  = "ticket.resolved"
	EventTicketEscalated = "ticket.escalated"
	EventCommentAdded    = "comment.added"
)

// PrefixHistory starts ticket history entry ids.
const PrefixHistory = "hist"

// Store is the support area's store: the core store's database, clock and
// helpers, with the support operations as methods.
type Store struct {
	core     *models.Store
	eventlog *eventlog.Store
	identity *identity.Store
	blobs    *blob.Bucket // attachments' content (nil: attachments refused)
	credits  CreditIssuer // SLA credits of resolution breaches (nil: none)
}

// bound returns a copy of s on the transaction tx (models.Store.Bound):
// every query of its methods runs on tx's connection.
func (s *Store) bound(tx *gorm.DB) *Store {
	core := s.core.Bound(tx)
	c := *s
	c.core, c.eventlog, c.identity = core, eventlog.NewStore(core), identity.NewStore(core)
	return &c
}

// NewStore returns the support store on core, configured by opts
// (WithBlobs).
func NewStore(core *models.Store, opts ...Option) *Store {
	s := &Store{core: core, eventlog: eventlog.NewStore(core), identity: identity.NewStore(core)}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Core returns the core store the support store works on.
func (s *Store) Core() *models.Store { return s.core }

func (s *Store) now() time.Time {
	if s.core.Now != nil {
		return s.core.Now().UTC()
	}
	return time.Now().UTC()
}

// notFoundOr maps gorm's record-not-found to NOT_FOUND for what, and any
// other failure to an internal error.
func notFoundOr(err error, what string) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return models.NotFound(what)
	}
	return models.AsError(err)
}

// dbErr wraps a database failure as an internal error (nil stays nil).
func dbErr(err error) error {
	if err == nil {
		return nil
	}
	return models.AsError(err)
}

// isStaff reports whether p is provider staff (agent or admin).
func isStaff(p *models.Principal) bool { return p.IsStaff() }

// actorType is "agent" for provider staff and "customer" otherwise.
func actorType(p *models.Principal) string {
	if isStaff(p) {
		return "agent"
	}
	return "customer"
}

// actorID is the person behind p when there is one, else the credential.
func actorID(p *models.Principal) string {
	if p.UserID != "" {
		return p.UserID
	}
	return p.ID
}

// caller returns the user behind p (nil when a machine credential acts).
func (s *Store) caller(ctx context.Context, p *models.Principal) *identity.User {
	if p.UserID == "" {
		return nil
	}
	var u identity.User
	if err := s.core.In(ctx, models.SystemScope()).Where("id = ?", p.UserID).Take(&u).Error; err != nil {
		return nil
	}
	return &u
}
