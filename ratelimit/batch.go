package ratelimit

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// batcher sends the limiter's per-request commands (the check script, the
// release of a concurrency slot) to Redis in pipelines: the commands that
// callers hand in while a pipeline is on its way are sent together in the
// next one (group commit). Each caller still waits for its own reply, so
// nothing changes for it but the cost: under load, many requests share one
// round trip, one write and one read on the socket. With one request at a
// time it is one command per pipeline, sent by the caller's own goroutine,
// as without it. No goroutine runs while nothing is queued.
type batcher struct {
	client  redis.UniversalClient
	timeout time.Duration // of each pipeline

	mu       sync.Mutex
	pending  []*batched
	flushing bool
	// later sends the commands queued by doLater when no other command
	// came to take them along within laterDelay (nil until the first);
	// laterArmed is set while it is due to fire.
	later      *time.Timer
	laterArmed bool
}

// laterDelay is the longest a command queued by doLater waits for another
// command's pipeline before it is sent on its own.
const laterDelay = time.Millisecond

// batched is one caller's command: queue adds it to a pipeline and returns
// it; done is closed once its reply (or error) is in.
type batched struct {
	queue func(ctx context.Context, p redis.Pipeliner) redis.Cmder
	cmd   redis.Cmder
	done  chan struct{}
	// abandoned is set (under the batcher's lock) when the caller stopped
	// waiting before the command was sent: it is then never sent, so a
	// caller that failed open spends nothing and holds no slot later.
	abandoned bool
}

// Bounds of the queue: the commands of one pipeline, and the commands
// waiting; beyond the latter (a Redis too slow for the load) a command is
// refused at once and its caller fails open.
const (
	maxBatch   = 256
	maxPending = 4096
)

// errQueueFull is returned when maxPending commands are waiting.
var errQueueFull = errors.New("ratelimit: too many commands waiting for redis")

// do queues a command, waits for its reply and returns the command (its
// error included). If ctx ends first, do returns ctx's error; the command
// may still run. A caller that finds no pipeline on its way sends the
// queue itself (it leads), so that one request at a time costs no
// goroutine and no hand-over between goroutines; once its own reply is in
// it hands what was queued meanwhile to a goroutine of its own.
func (b *batcher) do(ctx context.Context, queue func(ctx context.Context, p redis.Pipeliner) redis.Cmder) (redis.Cmder, error) {
	op := &batched{queue: queue, done: make(chan struct{})}
	b.mu.Lock()
	if len(b.pending) >= maxPending {
		b.mu.Unlock()
		return nil, errQueueFull
	}
	b.pending = append(b.pending, op)
	lead := !b.flushing
	b.flushing = true
	b.mu.Unlock()
	if lead {
		// Other goroutines ready to run (requests of their own, under
		// load) run first and queue their commands for this pipeline; with
		// none, this returns at once.
		runtime.Gosched()
		b.lead(ctx, op)
	}
	select {
	case <-op.done:
		return op.cmd, op.cmd.Err()
	case <-ctx.Done():
		b.mu.Lock()
		sent := op.cmd != nil
		op.abandoned = !sent
		b.mu.Unlock()
		return nil, ctx.Err()
	}
}

// doLater queues a command whose reply nobody waits for (the release of a
// concurrency slot): it goes in the next pipeline, another caller's, or on
// its own after laterDelay. Commands keep their order: a command queued
// after it, by this process, runs after it.
func (b *batcher) doLater(queue func(ctx context.Context, p redis.Pipeliner) redis.Cmder) {
	op := &batched{queue: queue, done: make(chan struct{})}
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.pending) >= maxPending {
		return // a Redis too slow for the load: the slot expires after its TTL
	}
	b.pending = append(b.pending, op)
	if b.flushing || b.laterArmed {
		return // the pipeline on its way, or the timer already due, takes it
	}
	b.laterArmed = true // never pushed back: the first queued command waits at most laterDelay
	if b.later == nil {
		b.later = time.AfterFunc(laterDelay, b.kick)
	} else {
		b.later.Reset(laterDelay)
	}
}

// kick sends what doLater queued, unless a pipeline is already on its way.
func (b *batcher) kick() {
	b.mu.Lock()
	b.laterArmed = false
	if b.flushing || len(b.pending) == 0 {
		b.mu.Unlock()
		return
	}
	b.flushing = true
	b.mu.Unlock()
	b.flush()
}

// sync waits until what doLater queued has been sent, if anything is
// queued or a pipeline is on its way (which may hold such a command): the
// limiter's commands that do not go through the batcher call it first, so
// that they see this process's releases, and so does a shutdown.
func (b *batcher) sync(ctx context.Context) {
	b.mu.Lock()
	busy := len(b.pending) > 0 || b.flushing
	b.mu.Unlock()
	if busy {
		_, _ = b.do(ctx, func(c context.Context, p redis.Pipeliner) redis.Cmder { return p.Ping(c) })
	}
}

// lead sends pipelines from the caller's goroutine until op's reply is in,
// then leaves the rest of the queue, if any, to flush. If ctx ends first
// (its request is gone), op is abandoned unless already sent and the queue
// is left to flush.
func (b *batcher) lead(ctx context.Context, op *batched) {
	for {
		if ctx.Err() != nil {
			b.mu.Lock()
			op.abandoned = op.cmd == nil
			b.mu.Unlock()
			go b.flush() // flushing stays set: the goroutine takes the queue over
			return
		}
		if !b.round() {
			return
		}
		select {
		case <-op.done:
			b.mu.Lock()
			if len(b.pending) == 0 {
				b.flushing = false
				b.mu.Unlock()
				return
			}
			b.mu.Unlock()
			go b.flush()
			return
		default:
		}
	}
}

// flush sends what is queued, then what was queued meanwhile, until the
// queue is empty.
func (b *batcher) flush() {
	for b.round() {
	}
}

// round sends one pipeline of what is queued (at most maxBatch commands)
// and reports whether it sent one; when the queue is empty it ends the
// flushing (the next caller leads) and reports false.
func (b *batcher) round() bool {
	b.mu.Lock()
	n := min(len(b.pending), maxBatch)
	if n == 0 {
		b.flushing = false
		b.mu.Unlock()
		return false
	}
	ops := b.pending[:n:n]
	b.pending = b.pending[n:]
	if len(b.pending) == 0 {
		b.pending = nil
	}
	// Commands whose callers gave up are dropped; the others are
	// marked sent (cmd set) before the lock is released.
	ctx, cancel := context.WithTimeout(context.Background(), b.timeout)
	defer cancel()
	pipe := b.client.Pipeline()
	live := ops[:0]
	for _, op := range ops {
		if op.abandoned {
			continue
		}
		op.cmd = op.queue(ctx, pipe)
		live = append(live, op)
	}
	b.mu.Unlock()
	if len(live) > 0 {
		// Each command carries its own error; Exec's is the first of them.
		_, _ = pipe.Exec(ctx)
	}
	for _, op := range live {
		close(op.done)
	}
	return true
}
