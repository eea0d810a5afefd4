package testenv

import (
	"context"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/sdk/client"
)

func TestFreePort(t *testing.T) {
	port := FreePort(t)
	if port <= 0 || port > 65535 {
		t.Fatalf("FreePort() = %d", port)
	}
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		t.Fatalf("listen on free port %d: %v", port, err)
	}
	_ = l.Close()
	if other := FreePort(t); other == port {
		t.Fatalf("FreePort returned %d twice in a row", port)
	}
}

func TestRedisURL(t *testing.T) {
	t.Parallel()
	rawURL := RedisURL(t)
	if !strings.HasPrefix(rawURL, "redis://127.0.0.1:") || !strings.HasSuffix(rawURL, "/0") {
		t.Fatalf("RedisURL() = %q", rawURL)
	}
	opts, err := redis.ParseURL(rawURL)
	if err != nil {
		t.Fatalf("parse %q: %v", rawURL, err)
	}
	rdb := redis.NewClient(opts)
	defer rdb.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if got, err := rdb.Ping(ctx).Result(); err != nil || got != "PONG" {
		t.Fatalf("PING = %q, %v", got, err)
	}
	if err := rdb.Set(ctx, "testenv", "ok", 0).Err(); err != nil {
		t.Fatalf("SET: %v", err)
	}
	if got, err := rdb.Get(ctx, "testenv").Result(); err != nil || got != "ok" {
		t.Fatalf("GET = %q, %v", got, err)
	}

	// A second server is a different, empty one.
	otherOpts, err := redis.ParseURL(RedisURL(t))
	if err != nil {
		t.Fatal(err)
	}
	other := redis.NewClient(otherOpts)
	defer other.Close()
	if n, err := other.Exists(ctx, "testenv").Result(); err != nil || n != 0 {
		t.Fatalf("second server: EXISTS = %d, %v; want 0", n, err)
	}
}

func TestDatabaseURL(t *testing.T) {
	t.Parallel()
	first := DatabaseURL(t)
	second := DatabaseURL(t)
	if first == second {
		t.Fatalf("two calls returned the same database %q", first)
	}

	if !IsPostgres() {
		for _, u := range []string{first, second} {
			if !strings.HasPrefix(u, "sqlite:") || !strings.HasSuffix(u, "test.db") {
				t.Fatalf("DatabaseURL() = %q, want sqlite:<dir>/test.db", u)
			}
		}
		return
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	names := make([]string, 0, 2)
	for _, u := range []string{first, second} {
		if !strings.HasPrefix(u, "postgres") {
			t.Fatalf("DatabaseURL() = %q, want a postgres URL", u)
		}
		conn, err := pgx.Connect(ctx, u)
		if err != nil {
			t.Fatalf("connect to %q: %v", u, err)
		}
		var one int
		if err := conn.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
			t.Fatalf("SELECT 1 on %q = %d, %v", u, one, err)
		}
		var name string
		if err := conn.QueryRow(ctx, "SELECT current_database()").Scan(&name); err != nil {
			t.Fatalf("current_database(): %v", err)
		}
		if !strings.HasPrefix(name, "test_") {
			t.Fatalf("current_database() = %q, want test_*", name)
		}
		names = append(names, name)
		// Leave the connection open: the cleanup must drop the database anyway.
		t.Cleanup(func() { _ = conn.Close(context.Background()) })
	}
	if names[0] == names[1] {
		t.Fatalf("both URLs point at database %q", names[0])
	}
}

func TestDatabaseURLIsDropped(t *testing.T) {
	if !IsPostgres() {
		t.Skip("TEST_DATABASE_URL is not set")
	}
	t.Parallel()
	var name string
	var open *pgx.Conn
	t.Run("create", func(t *testing.T) {
		u := DatabaseURL(t)
		conn, err := pgx.Connect(context.Background(), u)
		if err != nil {
			t.Fatal(err)
		}
		// Still connected when the subtest's cleanup drops the database:
		// DROP DATABASE ... WITH (FORCE) must not wait for it.
		open = conn
		if err := conn.QueryRow(context.Background(), "SELECT current_database()").Scan(&name); err != nil {
			t.Fatal(err)
		}
	})
	if open != nil {
		defer open.Close(context.Background())
	}
	if name == "" {
		t.Fatal("subtest did not report a database name")
	}
	conn, err := pgx.Connect(context.Background(), os.Getenv("TEST_DATABASE_URL"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var exists bool
	if err := conn.QueryRow(context.Background(),
		"SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		t.Fatal(err)
	}
	if exists {
		t.Fatalf("database %q still exists after its test finished", name)
	}
}

func TestTemporalAddress(t *testing.T) {
	t.Parallel()
	start := time.Now()
	addr := TemporalAddress(t, "--search-attribute", "OrganizationId=Keyword")
	t.Logf("Temporal dev server at %s ready after %v", addr, time.Since(start).Round(time.Millisecond))
	if _, _, err := net.SplitHostPort(addr); err != nil {
		t.Fatalf("TemporalAddress() = %q: %v", addr, err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := client.DialContext(ctx, client.Options{HostPort: addr, Namespace: "default"})
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	defer c.Close()
	if _, err := c.CheckHealth(ctx, &client.CheckHealthRequest{}); err != nil {
		t.Fatalf("CheckHealth: %v", err)
	}
	// The extra arguments reached the server.
	resp, err := c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: "default"})
	if err != nil {
		t.Fatalf("ListSearchAttributes: %v", err)
	}
	if _, ok := resp.GetCustomAttributes()["OrganizationId"]; !ok {
		t.Fatalf("search attribute OrganizationId not registered; custom attributes: %v", resp.GetCustomAttributes())
	}
}
