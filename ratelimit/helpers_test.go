package ratelimit

import (
	"context"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/telcoplatform/platform/redisconn"
	"github.com/telcoplatform/platform/testenv"
)

// server is a Redis server under test, reached by URL.
type server struct {
	name string
	url  string
}

// serverKinds are the two kinds of server every behaviour is proved against:
// the embedded one the API runs without REDIS_URL, and a real redis-server.
func serverKinds() []serverKind {
	return []serverKind{
		{"embedded", func(t testing.TB) string {
			client, _, closeFn, err := redisconn.Open(context.Background(), "")
			if err != nil {
				t.Fatalf("redisconn.Open: %v", err)
			}
			t.Cleanup(func() { _ = closeFn() })
			return "redis://" + client.(*redis.Client).Options().Addr + "/0"
		}},
		{"redis-server", func(t testing.TB) string { return testenv.RedisURL(t) }},
	}
}

type serverKind struct {
	name  string
	start func(t testing.TB) string
}

// eachServer runs fn as a subtest against a fresh embedded server and a
// fresh real redis-server (skipped when redis-server is not installed).
func eachServer(t *testing.T, fn func(t *testing.T, s server)) {
	t.Helper()
	for _, k := range serverKinds() {
		t.Run(k.name, func(t *testing.T) {
			fn(t, server{name: k.name, url: k.start(t)})
		})
	}
}

// client opens one more client of s, closed when t ends.
func (s server) client(t testing.TB) redis.UniversalClient {
	t.Helper()
	c, _, closeFn, err := redisconn.Open(context.Background(), s.url)
	if err != nil {
		t.Fatalf("redisconn.Open: %v", err)
	}
	t.Cleanup(func() { _ = closeFn() })
	return c
}

// limiter returns a Limiter on a new client of s.
func (s server) limiter(t testing.TB) *Limiter {
	return New(s.client(t))
}

// clockServer is a miniredis whose clock (TIME and key expiry) the test
// moves by hand, for behaviour that depends on the passing of time.
type clockServer struct {
	m   *miniredis.Miniredis
	now time.Time
}

func newClockServer(t *testing.T, start time.Time) (*clockServer, *Limiter) {
	t.Helper()
	m := miniredis.NewMiniRedis()
	m.SetTime(start)
	m.ClockTTL(true)
	if err := m.StartAddr("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	c := redis.NewClient(&redis.Options{Addr: m.Addr()})
	t.Cleanup(func() { _ = c.Close() })
	return &clockServer{m: m, now: start}, New(c)
}

// advance moves the server's clock forward by d.
func (c *clockServer) advance(d time.Duration) {
	c.set(c.now.Add(d))
}

// set moves the server's clock to t.
func (c *clockServer) set(t time.Time) {
	c.now = t
	c.m.SetTime(t)
}

// mustAllow calls Allow and fails the test on error.
func mustAllow(t testing.TB, l *Limiter, req Request) Result {
	t.Helper()
	r, err := l.Allow(context.Background(), req)
	if err != nil {
		t.Fatalf("Allow(%+v): %v", req, err)
	}
	return r
}
