package redisconn

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

func TestOpenEmbedded(t *testing.T) {
	ctx := context.Background()
	client, embedded, closeFn, err := Open(ctx, "")
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	if !embedded {
		t.Fatal("embedded = false for an empty URL")
	}
	if err := client.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatalf("SET: %v", err)
	}
	if got, err := client.Get(ctx, "k").Result(); err != nil || got != "v" {
		t.Fatalf("GET = %q, %v; want v", got, err)
	}
	if err := closeFn(); err != nil {
		t.Fatalf("close: %v", err)
	}
	if err := closeFn(); err != nil {
		t.Fatalf("second close: %v", err)
	}
	if err := client.Ping(ctx).Err(); err == nil {
		t.Fatal("ping after close succeeded")
	}
}

func TestOpenEmbeddedListensOnLoopback(t *testing.T) {
	ctx := context.Background()
	client, _, closeFn, err := Open(ctx, "")
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer closeFn()
	host, port, err := net.SplitHostPort(client.(*redis.Client).Options().Addr)
	if err != nil {
		t.Fatalf("addr: %v", err)
	}
	if host != "127.0.0.1" || port == "0" || port == "" {
		t.Fatalf("embedded server at %s:%s, want 127.0.0.1 and a real port", host, port)
	}
}

// The embedded server's TTLs must follow the wall clock: this is the one
// test that sleeps.
func TestEmbeddedTTLFollowsWallClock(t *testing.T) {
	ctx := context.Background()
	client, _, closeFn, err := Open(ctx, "")
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer closeFn()
	if err := client.Set(ctx, "short", "1", time.Second).Err(); err != nil {
		t.Fatalf("SET: %v", err)
	}
	if n, _ := client.Exists(ctx, "short").Result(); n != 1 {
		t.Fatal("key missing right after SET")
	}
	time.Sleep(1500 * time.Millisecond)
	n, err := client.Exists(ctx, "short").Result()
	if err != nil {
		t.Fatalf("EXISTS: %v", err)
	}
	if n != 0 {
		t.Fatal("key with a 1 s TTL still exists after 1.5 s")
	}
}

func TestOpenURL(t *testing.T) {
	ctx := context.Background()
	// Start an embedded server and reach it through a URL, like REDIS_URL.
	emb, _, closeEmb, err := Open(ctx, "")
	if err != nil {
		t.Fatalf("Open embedded: %v", err)
	}
	defer closeEmb()
	url := "redis://" + emb.(*redis.Client).Options().Addr + "/0"
	client, embedded, closeFn, err := Open(ctx, url)
	if err != nil {
		t.Fatalf("Open(%s): %v", url, err)
	}
	defer closeFn()
	if embedded {
		t.Fatal("embedded = true for a URL")
	}
	if err := client.Ping(ctx).Err(); err != nil {
		t.Fatalf("ping: %v", err)
	}
}

func TestOpenUnreachableDoesNotFail(t *testing.T) {
	ctx := context.Background()
	addr := closedPort(t)
	client, embedded, closeFn, err := Open(ctx, "redis://"+addr)
	if err != nil {
		t.Fatalf("Open of an unreachable server failed: %v", err)
	}
	defer closeFn()
	if embedded || client == nil {
		t.Fatalf("embedded=%v client=%v", embedded, client)
	}
	pctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if err := client.Ping(pctx).Err(); err == nil {
		t.Fatal("ping to a closed port succeeded")
	}
}

func TestOpenInvalidURL(t *testing.T) {
	for _, url := range []string{"http://127.0.0.1:1", "redis://127.0.0.1:1/notadb", "::"} {
		t.Run(url, func(t *testing.T) {
			_, _, _, err := Open(context.Background(), url)
			if err == nil {
				t.Fatalf("Open(%q) succeeded", url)
			}
			if errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Open(%q) tried to connect: %v", url, err)
			}
		})
	}
}

// closedPort returns a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}
