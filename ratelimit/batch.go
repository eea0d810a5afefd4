package ratelimit

import (
	"context"
	"strings"
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
// time it is one command per pipeline, as without it. No goroutine runs
// while nothing is queued.
type batcher struct {
	client  redis.UniversalClient
	timeout time.Duration // of each pipeline

	mu       sync.Mutex
	pending  []*batched
	flushing bool
}

// batched is one caller's command: queue adds it to a pipeline and returns
// it; done is closed once its reply (or error) is in.
type batched struct {
	queue func(ctx context.Context, p redis.Pipeliner) redis.Cmder
	cmd   redis.Cmder
	done  chan struct{}
}

// maxBatch bounds the commands of one pipeline.
const maxBatch = 256

// do queues a command, waits for its reply and returns the command (its
// error included). If ctx ends first, do returns ctx's error; the command
// may still run.
func (b *batcher) do(ctx context.Context, queue func(ctx context.Context, p redis.Pipeliner) redis.Cmder) (redis.Cmder, error) {
	op := &batched{queue: queue, done: make(chan struct{})}
	b.mu.Lock()
	b.pending = append(b.pending, op)
	if !b.flushing {
		b.flushing = true
		go b.flush()
	}
	b.mu.Unlock()
	select {
	case <-op.done:
		return op.cmd, op.cmd.Err()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// flush sends what is queued, then what was queued meanwhile, until the
// queue is empty.
func (b *batcher) flush() {
	for {
		b.mu.Lock()
		n := min(len(b.pending), maxBatch)
		if n == 0 {
			b.flushing = false
			b.mu.Unlock()
			return
		}
		ops := b.pending[:n:n]
		b.pending = b.pending[n:]
		if len(b.pending) == 0 {
			b.pending = nil
		}
		b.mu.Unlock()
		b.send(ops)
	}
}

func (b *batcher) send(ops []*batched) {
	ctx, cancel := context.WithTimeout(context.Background(), b.timeout)
	defer cancel()
	pipe := b.client.Pipeline()
	for _, op := range ops {
		op.cmd = op.queue(ctx, pipe)
	}
	// Each command carries its own error; Exec's is the first of them.
	_, _ = pipe.Exec(ctx)
	for _, op := range ops {
		close(op.done)
	}
}

// isNoScript reports whether err says the server does not have the script
// (a restarted or flushed Redis): the caller loads it and tries again.
func isNoScript(err error) bool {
	return err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT")
}
