package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/telcoplatform/platform/config"
)

// TestPprofOffByDefault: without PPROF_ADDR nothing listens.
func TestPprofOffByDefault(t *testing.T) {
	cfg, err := config.Load(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	addr, stop, err := startPprof(context.Background(), cfg.PprofAddr, slog.New(slog.DiscardHandler))
	if err != nil || addr != "" {
		t.Fatalf("startPprof by default = %q, %v; want off", addr, err)
	}
	stop()
}

// TestPprofLoopbackOnly: a loopback address serves /debug/pprof/; any other
// address is refused before listening.
func TestPprofLoopbackOnly(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	for _, addr := range []string{":0", "0.0.0.0:0", "[::]:0", "192.0.2.1:0", "example.com:0"} {
		if _, _, err := startPprof(context.Background(), addr, log); err == nil || !strings.Contains(err.Error(), "PPROF_ADDR") {
			t.Errorf("startPprof(%q): error %v, want a refusal", addr, err)
		}
	}
	addr, stop, err := startPprof(context.Background(), "127.0.0.1:0", log)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	res, err := http.Get("http://" + addr + "/debug/pprof/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.Contains(string(body), "goroutine") {
		t.Fatalf("GET /debug/pprof/: %d %.200s", res.StatusCode, body)
	}
}
