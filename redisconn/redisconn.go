// Package redisconn opens the Redis connection the API uses for rate-limit
// counters, suspensions and concurrency slots.
//
// With a REDIS_URL the API talks to that server; without one it starts an
// embedded in-process server (miniredis) on a random loopback port, which is
// enough for a single instance and for development.
package redisconn

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// PingTimeout bounds the start-up ping of an external server.
const PingTimeout = 2 * time.Second

// Open connects to Redis.
//
// An empty url starts an embedded miniredis server listening on 127.0.0.1 on
// a random port and returns a client for it with embedded set to true. Its
// key TTLs follow the wall clock (miniredis' ClockTTL), so suspensions,
// counters and concurrency slots expire as they would on a real server.
//
// A non-empty url is parsed with redis.ParseURL (redis:// or rediss://). The
// server is pinged once with PingTimeout; an unreachable server is logged but
// is not an error, because the API must start and fail open on rate limits.
// Only an invalid url is an error.
//
// Both clients have ContextTimeoutEnabled set: a context deadline bounds each
// command, including its socket reads and writes.
//
// closeFn closes the client and, for the embedded server, stops the server.
// It is safe to call more than once.
func Open(ctx context.Context, url string) (client redis.UniversalClient, embedded bool, closeFn func() error, err error) {
	if url == "" {
		return openEmbedded()
	}
	opts, err := redis.ParseURL(url)
	if err != nil {
		// The parse error may quote the URL, which can hold a password.
		return nil, false, nil, errors.New("redisconn: invalid redis URL")
	}
	// Socket reads and writes honour the caller's context deadline, so a
	// per-call timeout bounds a hung server as well as a refused one.
	opts.ContextTimeoutEnabled = true
	c := redis.NewClient(opts)
	pingCtx, cancel := context.WithTimeout(ctx, PingTimeout)
	defer cancel()
	if perr := c.Ping(pingCtx).Err(); perr != nil {
		slog.WarnContext(ctx, "redis unreachable at start-up; rate limits fail open until it answers",
			"addr", opts.Addr, "error", perr)
	}
	return c, false, onceClose(c.Close), nil
}

func openEmbedded() (redis.UniversalClient, bool, func() error, error) {
	m := miniredis.NewMiniRedis()
	// TTLs decrease as the wall clock advances (expired keys are removed
	// lazily, on the next access), and TIME answers time.Now().
	m.ClockTTL(true)
	if err := m.StartAddr("127.0.0.1:0"); err != nil {
		return nil, false, nil, fmt.Errorf("redisconn: start embedded redis: %w", err)
	}
	c := redis.NewClient(&redis.Options{Addr: m.Addr(), ContextTimeoutEnabled: true})
	closeFn := onceClose(func() error {
		err := c.Close()
		m.Close()
		return err
	})
	return c, true, closeFn, nil
}

// onceClose wraps f so that only the first call runs it; later calls return
// the first call's error.
func onceClose(f func() error) func() error {
	return sync.OnceValue(f)
}
