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

// TestNotice: a notice increments each written table's number, once per
// notice; a notice that cannot reach Redis does not fail the writer and
// is logged once, not once per write.
func TestNotice(t *testing.T) {
	ctx := context.Background()
	m := miniredis.RunT(t)
	client := redis.NewClient(&redis.Options{Addr: m.Addr()})
	t.Cleanup(func() { _ = client.Close() })
	var logs bytes.Buffer
	notice := rowversion.Notice(client, slog.New(slog.NewTextHandler(&logs, nil)))
	notice(ctx, []string{rowversion.Services, rowversion.Operations})
	notice(ctx, []string{rowversion.Services})
	for table, want := range map[string]string{rowversion.Services: "2", rowversion.Operations: "1"} {
		if got, err := m.Get(rowversion.Key(table)); err != nil || got != want {
			t.Fatalf("%s: %q, %v; want %s", table, got, err, want)
		}
	}
	m.Close()
	notice(ctx, []string{rowversion.Services})
	notice(ctx, []string{rowversion.Services})
	if n := strings.Count(logs.String(), "write notice did not reach Redis"); n != 1 {
		t.Fatalf("failed notices logged %d times, want 1:\n%s", n, logs.String())
	}
}
