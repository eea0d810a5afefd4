package api

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gofiber/contrib/websocket"
	"github.com/gofiber/fiber/v2"

	"github.com/telcoplatform/platform/events"
	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/eventlog"
	"github.com/telcoplatform/platform/webhooks"
)

// wsHandshakeTimeout is how long a WebSocket stream waits, after its
// 101 answer, for the upgraded connection's handler to run before it ends
// the stream (the answer could not be written).
const wsHandshakeTimeout = 30 * time.Second

// Limits of a real-time stream's filters.
const (
	maxStreamFilters = 50
	// slowConsumerCode is the error code of a stream closed because its
	// client did not read fast enough.
	slowConsumerCode = "SLOW_CONSUMER"
)

// streamFilter selects the events a real-time stream sends: its type
// patterns (none: every type), resource ids (none: every resource) and the
// event groups its credential may read (nil: every group).
type streamFilter struct {
	patterns  []string
	resources []string
	readable  []string
}

// match reports whether the stream sends ev.
func (f *streamFilter) match(ev *eventlog.Event) bool {
	if ev.Type == eventlog.EventWebhookTest {
		return false // sent to one subscription only
	}
	if f.readable != nil {
		group, _, _ := strings.Cut(ev.Type, ".")
		if !slices.Contains(f.readable, group) {
			return false
		}
	}
	if len(f.patterns) > 0 && !webhooks.Matches(f.patterns, ev.Type) {
		return false
	}
	return len(f.resources) == 0 || slices.Contains(f.resources, ev.ResourceID)
}

// queryList returns the values of a query parameter given repeatedly or
// as a comma-separated list, trimmed, without empty ones.
func queryList(c *fiber.Ctx, name string) []string {
	var out []string
	for _, raw := range c.Context().QueryArgs().PeekMulti(name) {
		for _, v := range strings.Split(string(raw), ",") {
			if v = strings.TrimSpace(v); v != "" {
				out = append(out, v)
			}
		}
	}
	return out
}

// streamRequest is a parsed GET /v1/stream.
type streamRequest struct {
	filter     streamFilter
	operations []string
	after      string // the event id to resume after ("": live only)
}

// parseStreamRequest reads the filters and the resume point of a stream
// request: types, resource_id, operations, after (or Last-Event-ID).
// Errors: VALIDATION_ERROR naming each bad field.
func parseStreamRequest(c *fiber.Ctx) (streamRequest, error) {
	var req streamRequest
	var v models.Validator
	types := queryList(c, "types")
	if len(types) > 0 {
		if len(types) > maxStreamFilters {
			v.Add("types", "at most 50 patterns")
		} else if norm, err := webhooks.NormalizePatterns(webhooks.AreaAll, types); err != nil {
			v.Add("types", "each must be an event name or a group pattern such as service.* ("+models.AsError(err).Message+")")
		} else if !slices.Contains(norm, webhooks.PatternAll) {
			req.filter.patterns = norm
		}
	}
	req.filter.resources = queryList(c, "resource_id")
	if len(req.filter.resources) > maxStreamFilters {
		v.Add("resource_id", "at most 50 resource ids")
	}
	for _, id := range req.filter.resources {
		if len(id) > 64 {
			v.Add("resource_id", "each must be at most 64 characters")
			break
		}
	}
	req.operations = queryList(c, "operations")
	if len(req.operations) > maxStreamFilters {
		v.Add("operations", "at most 50 operations")
	}
	req.after = strings.TrimSpace(c.Query("after"))
	if req.after == "" {
		req.after = strings.TrimSpace(c.Get("Last-Event-ID"))
	}
	if req.after != "" && !models.HasPrefix(req.after, models.PrefixEvent) {
		v.Add("after", "must be an event id (evt_...)")
	}
	return req, v.Err()
}

// eventStream is one open real-time stream.
type eventStream struct {
	principal  models.Principal
	filter     streamFilter
	operations []string
	after      eventlog.StreamPosition
	lease      *streamLease
	sub        *hubSub
}

// streamRoute serves GET /v1/stream: a WebSocket upgrade, or with
// `Accept: text/event-stream` Server-Sent Events. Other requests pass to
// the documented operation, which explains how to open a stream.
func (s *Server) streamRoute(c *fiber.Ctx) error {
	ws := websocket.IsWebSocketUpgrade(c)
	if !ws && !acceptsEventStream(c.Get(fiber.HeaderAccept)) {
		return c.Next()
	}
	p := models.PrincipalFrom(c.UserContext())
	if p == nil {
		return models.Errorf(models.CodeUnauthenticated, "this endpoint needs a credential: send Authorization: Bearer <API key>, X-API-Key, or ?token= from POST /v1/stream/token")
	}
	readable, err := events.ReadableGroups(p)
	if err != nil {
		return err
	}
	req, err := parseStreamRequest(c)
	if err != nil {
		return err
	}
	req.filter.readable = readable
	ctx := withRequestInfo(s.life, requestInfoFrom(c.UserContext())) // the stream outlives its handler, not the server
	st := &eventStream{principal: *p, filter: req.filter, operations: req.operations, after: eventlog.StreamPosition{At: s.store.Now()}}
	if req.after != "" {
		pos, err := s.eventlog.EventPosition(ctx, p.OwnScope(), req.after)
		if models.ErrorCode(err) == models.CodeNotFound {
			return models.Invalid(models.FieldIssue{Field: "after", Issue: "no such event of yours: unknown, or older than the event retention; reconnect without after and read what you missed with GET /v1/events"})
		}
		if err != nil {
			return err
		}
		st.after = pos
	}
	for _, id := range st.operations {
		if _, err := s.operations.GetOperation(ctx, p, id); err != nil {
			return err
		}
	}
	if c.Context().IsHead() {
		streamHeaders(c)
		return nil
	}
	lease, err := s.openStream(c, p)
	if err != nil {
		return err
	}
	st.lease = lease
	st.sub = s.hub.subscribe(s.life, models.Tenant{OrganizationID: p.OrganizationID, Environment: p.Environment})
	if ws {
		// state: 0 until the upgraded handler runs (1) or the handshake
		// is given up (2): a 101 that could not be written never runs the
		// handler, and the stream's slot and subscription end then.
		var state atomic.Int32
		giveUp := time.AfterFunc(wsHandshakeTimeout, func() {
			if state.CompareAndSwap(0, 2) {
				s.endEventStream(st)
			}
		})
		err := websocket.New(func(conn *websocket.Conn) {
			if !state.CompareAndSwap(0, 1) {
				return
			}
			giveUp.Stop()
			sink := newWSSink(conn, s.streams)
			s.runEventStream(ctx, st, sink)
			sink.stop()
		})(c)
		if err != nil && state.CompareAndSwap(0, 2) {
			giveUp.Stop()
			s.endEventStream(st)
		}
		return err
	}
	streamHeaders(c)
	// The stream's writes set the connection's write deadline: the
	// connection ends with the stream rather than serve another request.
	c.Context().SetConnectionClose()
	conn := c.Context().Conn()
	c.Context().SetBodyStreamWriter(func(w *bufio.Writer) {
		sink := &sseSink{w: w, conn: conn, timeout: s.streams.WriteTimeout}
		// The headers and a reconnection delay go out at once, so the
		// client knows the stream is open before the first event.
		if _, err := fmt.Fprint(w, "retry: 2000\n\n"); err != nil || sink.flush() != nil {
			s.endEventStream(st)
			return
		}
		s.runEventStream(ctx, st, sink)
	})
	return nil
}

// endEventStream frees what an open stream holds.
func (s *Server) endEventStream(st *eventStream) {
	s.hub.unsubscribe(st.sub)
	st.lease.close()
}

// streamSink writes a stream's messages to its client.
type streamSink interface {
	// event writes an event of the log (id set) or an operation's
	// document (id "").
	event(id, name string, payload []byte) error
	heartbeat() error
	// end writes the reason the server ends the stream (best effort).
	end(e *models.Error, reason string)
	// done is closed when the client has gone (nil when unknown).
	done() <-chan struct{}
}

// runEventStream sends the stream's backlog from the event log, then the
// hub's events as they come, the followed operations' changes, and
// heartbeats, until the client goes, the credential fails, the client
// falls behind or sseMaxDuration passes.
func (s *Server) runEventStream(ctx context.Context, st *eventStream, sink streamSink) {
	defer s.endEventStream(st)
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("panic in a real-time stream", "request_id", RequestID(ctx), "panic", r)
		}
	}()
	ctx, cancel := context.WithTimeout(ctx, sseMaxDuration)
	defer cancel()
	last := st.after
	send := func(ev *eventlog.Event) error {
		pos := eventlog.PositionOf(ev)
		if !last.Before(pos) {
			return nil // already sent (backlog and hub overlap)
		}
		last = pos
		if !st.filter.match(ev) {
			return nil
		}
		body, err := webhooks.Payload(ev.ID, ev.Type, ev.CreatedAt, ev.Data)
		if err != nil {
			return nil // an event the catalogue no longer knows
		}
		return sink.event(ev.ID, ev.Type, body)
	}
	fail := func(err error) { // a failed write: the client went, did not read in time, or the stream's context ended
		if s.endedByContext(ctx, sink) {
			return
		}
		if errors.Is(err, errSlowWrite) || st.sub.fellBehind() {
			s.metrics.StreamDisconnected("slow_consumer")
		}
	}
	scope := st.principal.OwnScope()
	for caughtUp := false; !caughtUp; caughtUp = s.hub.caughtUp(st.sub) {
		for {
			hz, err := s.eventlog.StreamHorizon(ctx, s.streams.Settle, s.streams.MaxLag)
			var evs []eventlog.Event
			if err == nil {
				evs, err = s.eventlog.EventsAfter(ctx, scope, eventlog.StreamQuery{After: last, Until: hz.Until, Limit: hubPage})
			}
			if err != nil {
				if !s.endedByContext(ctx, sink) { // a shutdown is no internal error
					sink.end(models.AsError(err), "")
				}
				return
			}
			for i := range evs {
				if err := send(&evs[i]); err != nil {
					fail(err)
					return
				}
			}
			if len(evs) < hubPage {
				break
			}
		}
	}
	ops := newOperationFollower(s, &st.principal, st.operations)
	if err := ops.poll(ctx, sink); err != nil {
		fail(err)
		return
	}
	heartbeat := time.NewTicker(s.streams.Heartbeat)
	defer heartbeat.Stop()
	check := time.NewTicker(s.streams.CredentialCheck)
	defer check.Stop()
	var opTick <-chan time.Time
	if len(st.operations) > 0 {
		t := time.NewTicker(ssePollInterval)
		defer t.Stop()
		opTick = t.C
	}
	for {
		var err error
		behind := false
		select {
		case ev := <-st.sub.ch:
			// Once behind, nothing more is sent but the reason.
			if behind = st.sub.fellBehind(); !behind {
				err = send(&ev)
			}
		case <-st.sub.slow:
			behind = true
		case <-heartbeat.C:
			err = sink.heartbeat()
		case <-opTick:
			err = ops.poll(ctx, sink)
		case <-check.C:
			cerr := st.lease.check(ctx)
			if cerr == nil {
				cerr = st.lease.verify(ctx, s.streamSlotTTL())
			}
			if cerr == nil {
				continue
			}
			if !s.endedByContext(ctx, sink) && !errors.Is(cerr, context.Canceled) {
				s.metrics.StreamDisconnected("credential")
				sink.end(models.AsError(cerr), "credential")
			}
			return
		case <-sink.done():
			return
		case <-ctx.Done():
			s.endedByContext(ctx, sink)
			return
		}
		if behind {
			s.metrics.StreamDisconnected("slow_consumer")
			sink.end(models.Errorf(slowConsumerCode, "the stream fell more than %d events behind; reconnect with the last event id", s.streams.Buffer), "slow consumer")
			return
		}
		if err != nil {
			fail(err)
			return
		}
	}
}

// endedByContext reports whether the stream's context has ended and, if
// so, tells the client why: the server's shutdown (SERVICE_MAINTENANCE,
// details.reason "shutdown") or the stream's maximum duration. A read of
// the event log or of an operation that failed because of it is neither
// an internal error nor a lost operation.
func (s *Server) endedByContext(ctx context.Context, sink streamSink) bool {
	if ctx.Err() == nil {
		return false
	}
	if shuttingDown(ctx) {
		s.metrics.StreamDisconnected("shutdown")
		sink.end(shutdownError(), "shutdown")
	} else if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		s.metrics.StreamDisconnected("max_duration")
		sink.end(models.Errorf(models.CodeServiceMaintenance, "the stream reached its maximum duration; reconnect with the last event id"), "max duration")
	}
	return true
}

// errSlowWrite is a write to the client that did not complete within
// StreamOptions.WriteTimeout.
var errSlowWrite = errors.New("the client did not read within the write timeout")

// writeErr maps a timed-out write to errSlowWrite.
func writeErr(err error) error {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return errSlowWrite
	}
	return err
}

// operationFollower sends the followed operations' documents when they
// change.
type operationFollower struct {
	s    *Server
	p    *models.Principal
	ids  []string
	sent map[string]*sentOperation // by operation
}

func newOperationFollower(s *Server, p *models.Principal, ids []string) *operationFollower {
	return &operationFollower{s: s, p: p, ids: ids, sent: map[string]*sentOperation{}}
}

// poll reads each followed operation and sends its document when it
// changed; an operation that ended is followed no more. Errors: the
// sink's, and ctx's when it ended.
func (f *operationFollower) poll(ctx context.Context, sink streamSink) error {
	keep := f.ids[:0]
	for _, id := range f.ids {
		sent := f.sent[id]
		if sent == nil {
			sent = &sentOperation{}
			f.sent[id] = sent
		}
		snap, err := f.s.operations.OperationSnapshot(ctx, f.p, id, sent.snap, models.RowVersion{})
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err() // the stream ends (a shutdown): the operation is not gone
			}
			continue // gone or no longer readable: dropped
		}
		raw, err := sent.update(f.s, snap)
		if err != nil {
			continue
		}
		if raw != nil {
			if err := sink.event("", "operation", raw); err != nil {
				return err
			}
		}
		if !snap.Row.Status.Terminal() {
			keep = append(keep, id)
		}
	}
	f.ids = keep
	return nil
}
