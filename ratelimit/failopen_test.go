package ratelimit

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"

	"github.com/telcoplatform/platform/redisconn"
	"github.com/telcoplatform/platform/testenv"
)

// Every method reports an unreachable Redis as ErrUnavailable, so the caller
// can fail open.
func TestUnavailable(t *testing.T) {
	stopped := []struct {
		name string
		url  func(t *testing.T) string
	}{
		{"embedded server stopped", func(t *testing.T) string {
			m := miniredis.NewMiniRedis()
			if err := m.StartAddr("127.0.0.1:0"); err != nil {
				t.Fatal(err)
			}
			url := "redis://" + m.Addr()
			m.Close()
			return url
		}},
		{"redis-server stopped", func(t *testing.T) string {
			var url string
			// testenv stops the server when the subtest that started it ends.
			t.Run("start", func(t *testing.T) { url = testenv.RedisURL(t) })
			if url == "" {
				t.Skip("no redis-server")
			}
			return url
		}},
		{"nothing listening", func(t *testing.T) string {
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			addr := l.Addr().String()
			l.Close()
			return "redis://" + addr
		}},
	}
	ops := []struct {
		name string
		call func(ctx context.Context, l *Limiter) error
	}{
		{"Allow", func(ctx context.Context, l *Limiter) error {
			_, err := l.Allow(ctx, Request{Key: "ak_x", OrgID: "org_x", Cost: 1, Hourly: 1000, Burst: 100, Group: GroupBilling})
			return err
		}},
		{"CurrentUsage", func(ctx context.Context, l *Limiter) error {
			_, err := l.CurrentUsage(ctx, "ak_x", 1000, 100)
			return err
		}},
		{"Acquire", func(ctx context.Context, l *Limiter) error {
			release, ok, err := l.Acquire(ctx, "ak_x", 10, time.Minute)
			if ok || release == nil {
				t.Errorf("Acquire without Redis: ok=%v release=%v", ok, release != nil)
			}
			release()
			return err
		}},
		{"InFlight", func(ctx context.Context, l *Limiter) error {
			_, err := l.InFlight(ctx, "ak_x")
			return err
		}},
		{"HourlyHistory", func(ctx context.Context, l *Limiter) error {
			_, err := l.HourlyHistory(ctx, "ak_x", time.Now(), 24)
			return err
		}},
		{"MonthlyUsage", func(ctx context.Context, l *Limiter) error {
			_, _, err := l.MonthlyUsage(ctx, "org_x", time.Now())
			return err
		}},
	}
	for _, s := range stopped {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel() // each Open pings its dead server for up to redisconn.PingTimeout
			url := s.url(t)
			client, _, closeFn, err := redisconn.Open(context.Background(), url)
			if err != nil {
				t.Fatalf("Open must not fail for an unreachable server: %v", err)
			}
			defer closeFn()
			l := New(client, WithTimeout(200*time.Millisecond))
			for _, op := range ops {
				t.Run(op.name, func(t *testing.T) {
					err := op.call(context.Background(), l)
					if !errors.Is(err, ErrUnavailable) {
						t.Fatalf("err = %v, want ErrUnavailable", err)
					}
				})
			}
		})
	}
}

// A slot taken before Redis went away: releasing it must not panic or hang.
func TestReleaseAfterServerStopped(t *testing.T) {
	m := miniredis.NewMiniRedis()
	if err := m.StartAddr("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	client, _, closeFn, err := redisconn.Open(context.Background(), "redis://"+m.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer closeFn()
	l := New(client, WithTimeout(200*time.Millisecond))
	release, ok, err := l.Acquire(context.Background(), "ak_y", 1, time.Minute)
	if err != nil || !ok {
		t.Fatalf("ok=%v err=%v", ok, err)
	}
	m.Close()
	release()
	release()
	// Closed client: also ErrUnavailable.
	_ = closeFn()
	if _, err := l.Allow(context.Background(), Request{Key: "ak_y", Cost: 1}); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("closed client: err = %v, want ErrUnavailable", err)
	}
}

// An error reply of a working server is a bug, not an outage: it must not be
// reported as ErrUnavailable (the caller would silently fail open forever).
func TestServerErrorIsNotUnavailable(t *testing.T) {
	eachServer(t, func(t *testing.T, s server) {
		c := s.client(t)
		ctx := context.Background()
		// A key of the wrong type where the hourly bucket lives.
		if err := c.HSet(ctx, credentialPrefix("ak_broken")+"hour", "f", "v").Err(); err != nil {
			t.Fatal(err)
		}
		_, err := New(c).Allow(ctx, Request{Key: "ak_broken", Cost: 1, Hourly: 10})
		if err == nil || errors.Is(err, ErrUnavailable) {
			t.Fatalf("err = %v, want a non-ErrUnavailable error", err)
		}
	})
}
