package rowversion_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/telcoplatform/platform/rowversion"
)

// TestNotice: each notice raises each changed table's number; a notice
// that cannot reach Redis does not fail the writer and is logged once, not
// once per write.
func TestNotice(t *testing.T) {
	ctx := context.Background()
	m := miniredis.RunT(t)
	client := redis.NewClient(&redis.Options{Addr: m.Addr()})
	t.Cleanup(func() { _ = client.Close() })
	var logs bytes.Buffer
	notice := rowversion.Notice(client, slog.New(slog.NewTextHandler(&logs, nil)))
	number := func(table string) int64 {
		t.Helper()
		v, err := client.Get(ctx, rowversion.Key(table)).Int64()
		if err != nil && err != redis.Nil {
			t.Fatal(err)
		}
		return v
	}
	notice(ctx, []string{rowversion.Services, rowversion.Operations})
	services, operations := number(rowversion.Services), number(rowversion.Operations)
	if services <= 0 || operations <= 0 {
		t.Fatalf("after a notice: services %d, operations %d", services, operations)
	}
	notice(ctx, []string{rowversion.Services})
	if got := number(rowversion.Services); got <= services {
		t.Fatalf("services after a second notice: %d, was %d", got, services)
	}
	if got := number(rowversion.Operations); got != operations {
		t.Fatalf("operations changed by a notice of services: %d, was %d", got, operations)
	}
	m.Close()
	notice(ctx, []string{rowversion.Services})
	notice(ctx, []string{rowversion.Services})
	if n := strings.Count(logs.String(), "write notice did not reach Redis"); n != 1 {
		t.Fatalf("failed notices logged %d times, want 1:\n%s", n, logs.String())
	}
}
