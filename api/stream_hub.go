package api

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/telcoplatform/platform/metrics"
	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/eventlog"
)

// StreamChannel is the Redis pub/sub channel on which the event dispatcher
// announces committed events ("<organization>:<environment>:<event id>"),
// waking the real-time streams of every API instance. The message is a
// wake-up only: streams read the events themselves from the database.
const StreamChannel = "platform:events"

// Defaults of the real-time stream (GET /v1/stream).
const (
	// DefaultStreamSettle is how old an event must be before streams send
	// it: a transaction that committed an older event late is not skipped.
	DefaultStreamSettle = time.Second
	// DefaultStreamMaxLag is how far behind now, at most, an open database
	// transaction holds the streams back (see eventlog.StreamHorizon): a
	// long or idle-in-transaction writer stalls no stream for longer.
	DefaultStreamMaxLag = 30 * time.Second
	// DefaultStreamPoll is how often the hub reads the event log when no
	// announcement woke it (the safety net of a lost message).
	DefaultStreamPoll = time.Second
	// DefaultStreamBuffer is how many events a stream may have waiting to
	// be written before it is closed as a slow consumer.
	DefaultStreamBuffer = 256
	// DefaultStreamHeartbeat is the interval of WebSocket pings and SSE
	// keep-alive comments.
	DefaultStreamHeartbeat = 15 * time.Second
	// DefaultStreamWriteTimeout is how long a write to a client may block
	// before the stream is closed as a slow consumer.
	DefaultStreamWriteTimeout = 10 * time.Second
	// DefaultStreamCredentialCheck is how often a real-time stream checks
	// its credential through the key cache (revocations end it).
	DefaultStreamCredentialCheck = time.Second
	hubPage                      = 500
)

// hubSub is one stream's subscription to the hub: the events of its
// tenant, in order, through a bounded buffer.
type hubSub struct {
	tenant models.Tenant
	ch     chan eventlog.Event
	// slow is closed when the buffer overflowed after catch-up.
	slow     chan struct{}
	slowOnce sync.Once
	// catchingUp and missed: while the stream reads its backlog from the
	// database, an overflow only sets missed (the stream reads the log
	// again) instead of ending it.
	catchingUp bool
	missed     bool
}

// streamHub reads the event log once for every stream of this instance
// and hands each stream the events of its tenant. It runs only while
// streams are open. Redis announcements (StreamChannel) wake it early.
type streamHub struct {
	eventlog *eventlog.Store
	redis    redis.UniversalClient
	log      *slog.Logger
	metrics  *metrics.Metrics
	opts     StreamOptions

	mu      sync.Mutex
	subs    map[*hubSub]struct{}
	running bool
	cursor  eventlog.StreamPosition
	wake    chan struct{}
}

func newStreamHub(store *eventlog.Store, rdb redis.UniversalClient, log *slog.Logger, m *metrics.Metrics, opts StreamOptions) *streamHub {
	return &streamHub{eventlog: store, redis: rdb, log: log, metrics: m, opts: opts, subs: map[*hubSub]struct{}{}, wake: make(chan struct{}, 1)}
}

// subscribe registers a stream of tenant, catching up (see hubSub); the
// hub, started by its first stream, runs until its last stream ends or
// life does (the server's shutdown).
func (h *streamHub) subscribe(life context.Context, tenant models.Tenant) *hubSub {
	sub := &hubSub{tenant: tenant, ch: make(chan eventlog.Event, h.opts.Buffer), slow: make(chan struct{}), catchingUp: true}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.subs[sub] = struct{}{}
	if !h.running {
		h.running = true
		h.cursor = eventlog.StreamPosition{At: h.eventlog.Now().Add(-h.opts.Settle)}
		go h.run(life)
	}
	return sub
}

// unsubscribe removes sub; the hub stops with its last stream.
func (h *streamHub) unsubscribe(sub *hubSub) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.subs, sub)
}

// caughtUp ends sub's catch-up unless the hub dropped events meanwhile
// (then the stream reads the log again and asks later).
func (h *streamHub) caughtUp(sub *hubSub) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if sub.missed {
		sub.missed = false
		return false
	}
	sub.catchingUp = false
	return true
}

// Wake makes the hub read the event log now.
func (h *streamHub) Wake() {
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

// tenants returns the tenants of the open streams, and whether the hub
// goes on: not when no stream is open or ctx has ended (it stops then).
func (h *streamHub) tenants(ctx context.Context) ([]models.Tenant, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.subs) == 0 || ctx.Err() != nil {
		h.running = false
		return nil, false
	}
	seen := map[models.Tenant]bool{}
	var out []models.Tenant
	for sub := range h.subs {
		if !seen[sub.tenant] {
			seen[sub.tenant] = true
			out = append(out, sub.tenant)
		}
	}
	return out, true
}

// run reads the event log while streams are open, until life ends.
func (h *streamHub) run(life context.Context) {
	ctx, cancel := context.WithCancel(life)
	defer cancel()
	if h.redis != nil {
		go h.listen(ctx)
	}
	// An open transaction may still commit events older than now - Settle:
	// the hub starts at the log's horizon.
	if hz, err := h.eventlog.StreamHorizon(ctx, h.opts.Settle, h.opts.MaxLag); err == nil && hz.Until.Before(h.cursor.At) {
		h.cursor = eventlog.StreamPosition{At: hz.Until}
	}
	capped := false // the horizon is capped (reported once per episode)
	for {
		tenants, ok := h.tenants(ctx)
		if !ok {
			return
		}
		wait := h.opts.Poll
		hz, err := h.eventlog.StreamHorizon(ctx, h.opts.Settle, h.opts.MaxLag)
		var evs []eventlog.Event
		if err == nil {
			capped = h.reportCap(hz, capped)
			evs, err = h.eventlog.EventsAfter(ctx, models.SystemScope(), eventlog.StreamQuery{After: h.cursor,
				Until: hz.Until, Tenants: tenants, Limit: hubPage})
		}
		if err != nil && ctx.Err() == nil {
			h.log.Warn("the real-time stream could not read the event log; retrying", "error", err)
		}
		for i := range evs {
			h.deliver(&evs[i])
			h.cursor = eventlog.PositionOf(&evs[i])
		}
		if len(evs) == hubPage {
			continue
		}
		select {
		case <-h.wake:
			// An announced event settles Settle after its creation.
			wait = h.opts.Settle
			select {
			case <-time.After(wait):
			case <-ctx.Done():
			}
		case <-time.After(wait):
		case <-ctx.Done():
		}
	}
}

// reportCap counts a horizon that an open transaction older than MaxLag
// would have held further back, and logs a warning when that begins (was:
// whether the previous horizon was capped); it returns hz.Capped.
func (h *streamHub) reportCap(hz eventlog.Horizon, was bool) bool {
	switch {
	case hz.Capped:
		h.metrics.StreamHorizonCapped()
		if !was {
			h.log.Warn("a database transaction open for longer than the real-time streams' maximum lag would hold every stream back; "+
				"streams go on without waiting for it, so events it commits may not be streamed (the event log and webhooks have them)",
				"transaction_start", hz.Oldest, "open_for", h.eventlog.Now().Sub(hz.Oldest).Round(100*time.Millisecond).String(), "max_lag", h.opts.MaxLag.String())
		}
	case was:
		h.log.Info("the real-time streams' horizon is no longer capped: no database transaction older than the maximum lag is open")
	}
	return hz.Capped
}

// deliver hands ev to the streams of its tenant; a full buffer marks a
// catching-up stream as having missed events, and any other as slow.
func (h *streamHub) deliver(ev *eventlog.Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for sub := range h.subs {
		if sub.tenant != ev.Tenant {
			continue
		}
		select {
		case sub.ch <- *ev:
		default:
			if sub.catchingUp {
				sub.missed = true
			} else {
				sub.slowOnce.Do(func() { close(sub.slow) })
			}
		}
	}
}

// listen wakes the hub on every announcement until ctx ends.
func (h *streamHub) listen(ctx context.Context) {
	ps := h.redis.Subscribe(ctx, StreamChannel)
	defer func() { _ = ps.Close() }()
	ch := ps.Channel()
	for {
		select {
		case <-ctx.Done():
			return
		case msg, ok := <-ch:
			if !ok {
				return
			}
			if strings.Count(msg.Payload, ":") >= 2 {
				h.Wake()
			}
		}
	}
}

// AnnounceEvents publishes a wake-up on StreamChannel for each event of
// evs (committed events: the dispatcher calls it with the events it
// reads). Errors are returned for logging only: streams poll anyway.
func AnnounceEvents(ctx context.Context, rdb redis.UniversalClient, evs []eventlog.Event) error {
	if rdb == nil || len(evs) == 0 {
		return nil
	}
	pipe := rdb.Pipeline()
	for i := range evs {
		pipe.Publish(ctx, StreamChannel, evs[i].OrganizationID+":"+string(evs[i].Environment)+":"+evs[i].ID)
	}
	_, err := pipe.Exec(ctx)
	return err
}

// fellBehind reports whether the subscription's buffer overflowed after
// catch-up (slow is closed).
func (sub *hubSub) fellBehind() bool {
	select {
	case <-sub.slow:
		return true
	default:
		return false
	}
}
