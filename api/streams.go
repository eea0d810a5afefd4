package api

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/ratelimit"
)

// Defaults of StreamOptions.
const (
	// DefaultStreamRecheck is how often an open stream checks its credential
	// again (revoked or expired keys, tokens and certificates end it).
	DefaultStreamRecheck = 20 * time.Second
	// DefaultMaxStreams caps the open event streams of one organization and
	// environment, across instances (with Redis).
	DefaultMaxStreams = 20
)

// StreamOptions tune the Server-Sent Events streams; zero values take the
// defaults.
type StreamOptions struct {
	Recheck      time.Duration // default DefaultStreamRecheck
	MaxPerTenant int           // default DefaultMaxStreams
	// The real-time stream (GET /v1/stream; see stream_hub.go).
	Settle          time.Duration // default DefaultStreamSettle
	MaxLag          time.Duration // default DefaultStreamMaxLag
	Poll            time.Duration // default DefaultStreamPoll
	Buffer          int           // default DefaultStreamBuffer
	Heartbeat       time.Duration // default DefaultStreamHeartbeat
	WriteTimeout    time.Duration // default DefaultStreamWriteTimeout
	CredentialCheck time.Duration // default DefaultStreamCredentialCheck
}

func (o StreamOptions) withDefaults() StreamOptions {
	if o.Recheck <= 0 {
		o.Recheck = DefaultStreamRecheck
	}
	if o.MaxPerTenant <= 0 {
		o.MaxPerTenant = DefaultMaxStreams
	}
	o.Settle = orDefault(o.Settle, DefaultStreamSettle)
	o.MaxLag = orDefault(o.MaxLag, DefaultStreamMaxLag)
	o.Poll = orDefault(o.Poll, DefaultStreamPoll)
	o.Heartbeat = orDefault(o.Heartbeat, DefaultStreamHeartbeat)
	o.WriteTimeout = orDefault(o.WriteTimeout, DefaultStreamWriteTimeout)
	o.CredentialCheck = orDefault(o.CredentialCheck, DefaultStreamCredentialCheck)
	if o.Buffer <= 0 {
		o.Buffer = DefaultStreamBuffer
	}
	return o
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// credentialCheck authenticates again the credential of the request it was
// made for (set by authenticate): nil while the credential is still good.
type credentialCheck func(ctx context.Context) error

type credentialCheckKey struct{}

// setCredentialCheck records how to re-check the request's credential.
func setCredentialCheck(c *fiber.Ctx, check credentialCheck) { c.Locals(credentialCheckKey{}, check) }

// streamSlot is a slot a stream holds until it ends: the organization's
// concurrency slot and the stream-cap slot.
type streamSlot interface {
	Renew(ctx context.Context, ttl time.Duration) (bool, error)
	Release()
}

// heldSlot is the concurrency slot of a request (see rateLimit). It is freed
// when the request's handler returns, unless a stream took it over.
type heldSlot struct{ slot *ratelimit.Slot }

type heldSlotKey struct{}

// release frees the slot unless it was handed over. The answer does not
// wait for Redis: the release goes with the limiter's next pipeline (see
// ratelimit.Slot.ReleaseSoon).
func (h *heldSlot) release() {
	if h.slot != nil {
		h.slot.ReleaseSoon()
	}
}

// handOver gives the slot to the caller, who frees it.
func (h *heldSlot) handOver() *ratelimit.Slot {
	s := h.slot
	h.slot = nil
	return s
}

// localStreams counts open streams per tenant on this instance, when the
// limiter is absent or unreachable.
type localStreams struct {
	mu   sync.Mutex
	open map[string]int
}

// take opens a stream of key, at most limit at once.
func (l *localStreams) take(key string, limit int) (streamSlot, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open[key] >= limit {
		return nil, false
	}
	l.open[key]++
	return &localSlot{streams: l, key: key}, true
}

// localSlot is one open stream counted by localStreams.
type localSlot struct {
	streams *localStreams
	key     string
	once    sync.Once
}

// Renew keeps the slot (local slots do not expire).
func (s *localSlot) Renew(context.Context, time.Duration) (bool, error) { return true, nil }

// Release closes the stream's place.
func (s *localSlot) Release() {
	s.once.Do(func() {
		s.streams.mu.Lock()
		defer s.streams.mu.Unlock()
		if s.streams.open[s.key]--; s.streams.open[s.key] <= 0 {
			delete(s.streams.open, s.key)
		}
	})
}

// streamLease is what an open stream holds: its slots and its credential,
// checked again every Recheck.
type streamLease struct {
	check credentialCheck
	every time.Duration
	next  time.Time
	slots []streamSlot
}

// openStream admits an event stream of p: it takes one of the tenant's
// stream places (429 CONCURRENCY_LIMIT_EXCEEDED beyond MaxPerTenant) and
// takes over the request's concurrency slot, so that both are held until
// the stream ends (close). Errors: CONCURRENCY_LIMIT_EXCEEDED, INTERNAL_ERROR.
func (s *Server) openStream(c *fiber.Ctx, p *models.Principal) (*streamLease, error) {
	check, _ := c.Locals(credentialCheckKey{}).(credentialCheck)
	if check == nil {
		return nil, models.Internal(errors.New("an event stream without a credential to re-check"))
	}
	key := "streams:" + p.OrganizationID + ":" + string(p.Environment)
	limit := s.streams.MaxPerTenant
	var place streamSlot
	ok := false
	if s.limiter != nil {
		slot, got, err := s.limiter.AcquireSlot(c.UserContext(), key, limit, s.streamSlotTTL())
		if err != nil {
			s.limiterFailedOpen(c.UserContext(), err)
		} else {
			place, ok = slot, got
			if !got {
				return nil, streamLimitError(limit)
			}
		}
	}
	if !ok { // no limiter, or Redis unreachable: count on this instance
		if place, ok = s.openStreams.take(key, limit); !ok {
			return nil, streamLimitError(limit)
		}
	}
	lease := &streamLease{check: check, every: s.streams.Recheck, next: time.Now().Add(s.streams.Recheck), slots: []streamSlot{place}}
	if held, _ := c.Locals(heldSlotKey{}).(*heldSlot); held != nil {
		if slot := held.handOver(); slot != nil {
			lease.slots = append(lease.slots, slot)
		}
	}
	return lease, nil
}

func streamLimitError(limit int) error {
	return models.Errorf(models.CodeConcurrencyLimit, "too many open event streams for this organization (limit %d); close one or retry later", limit).
		WithDetail("limit", limit).WithDetail("kind", "event_streams").WithDetail("retry_after", 5)
}

// streamSlotTTL is the life of a stream's slots between renewals: a stream
// of a crashed instance stops counting after it.
func (s *Server) streamSlotTTL() time.Duration {
	return max(ratelimit.DefaultSlotTTL, 3*s.streams.Recheck)
}

// verify checks the credential again once every Recheck and renews the
// stream's slots; an error (revoked or expired credential) ends the stream.
func (l *streamLease) verify(ctx context.Context, ttl time.Duration) error {
	now := time.Now()
	if now.Before(l.next) {
		return nil
	}
	l.next = now.Add(l.every)
	if err := l.check(ctx); err != nil {
		return err // fails closed: the client reconnects and authenticates again
	}
	for _, slot := range l.slots {
		_, _ = slot.Renew(ctx, ttl) // an unreachable Redis lets the slot expire
	}
	return nil
}

// close frees the stream's slots.
func (l *streamLease) close() {
	for _, slot := range l.slots {
		slot.Release()
	}
}

// streamHeaders sets the headers of a Server-Sent Events answer.
func streamHeaders(c *fiber.Ctx) {
	c.Set(fiber.HeaderContentType, "text/event-stream")
	c.Set(fiber.HeaderCacheControl, "no-cache")
	c.Set(fiber.HeaderConnection, "keep-alive")
	c.Set("X-Accel-Buffering", "no")
	c.Status(fiber.StatusOK)
}
