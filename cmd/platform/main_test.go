package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/telcoplatform/platform/testenv"
)

// envFor returns a getenv over a fresh SQLite database and fixed secrets.
func envFor(t *testing.T, extra map[string]string) func(string) string {
	t.Helper()
	vars := map[string]string{
		"DATABASE_URL":       "sqlite:" + filepath.Join(t.TempDir(), "cli.db"),
		"SECRETS_KEY":        strings.Repeat("ab", 32),
		"PLATFORM_ADMIN_KEY": "sk_live_" + strings.Repeat("A", 56),
		"LOG_LEVEL":          "error",
	}
	for k, v := range extra {
		vars[k] = v
	}
	return func(k string) string { return vars[k] }
}

func TestCommands(t *testing.T) {
	ctx := context.Background()
	env := envFor(t, nil)
	tests := []struct {
		name    string
		args    []string
		wantOut string
		wantErr string
	}{
		{"no command", nil, "usage", "no command"},
		{"unknown command", []string{"fly"}, "usage", "unknown command"},
		{"help", []string{"help"}, "usage", ""},
		{"-h", []string{"-h"}, "usage", ""},
		{"--help", []string{"--help"}, "usage", ""},
		{"config lists every variable", []string{"config"}, "SECRETS_KEY", ""},
		{"migrate", []string{"migrate"}, "", ""},
		{"seed", []string{"seed"}, "", ""},
		{"seed again is harmless", []string{"seed"}, "", ""},
		{"keys create", []string{"keys", "create", "-name", "ops", "-permissions", "services:read"}, "key: sk_live_", ""},
		{"keys create in the sandbox", []string{"keys", "create", "-env", "test"}, "key: sk_test_", ""},
		{"keys without create", []string{"keys"}, "", "usage: platform keys create"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			err := run(ctx, tc.args, env, &out)
			if tc.wantErr == "" && err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("want error %q, got %v", tc.wantErr, err)
			}
			if !strings.Contains(out.String(), tc.wantOut) {
				t.Fatalf("output %q lacks %q", out.String(), tc.wantOut)
			}
		})
	}
}

func TestBadConfigurationNamesTheVariable(t *testing.T) {
	tests := map[string]map[string]string{
		"SECRETS_KEY":  {"SECRETS_KEY": ""},
		"HTTP_ADDR":    {"HTTP_ADDR": "nope"},
		"DATABASE_URL": {"DATABASE_URL": "postgres://nobody@127.0.0.1:1/none?connect_timeout=1"},
	}
	for variable, extra := range tests {
		t.Run(variable, func(t *testing.T) {
			err := run(context.Background(), []string{"migrate"}, envFor(t, extra), &bytes.Buffer{})
			if variable == "SECRETS_KEY" {
				err = run(context.Background(), []string{"seed"}, envFor(t, extra), &bytes.Buffer{})
			}
			if err == nil || !strings.Contains(err.Error(), variable) {
				t.Fatalf("want an error naming %s, got %v", variable, err)
			}
		})
	}
}

// TestServeStopsGracefully starts `platform serve` on a free port (Temporal
// is lazy, Redis embedded), checks it answers, cancels it and expects a
// clean return.
func TestServeStopsGracefully(t *testing.T) {
	port := testenv.FreePort(t)
	env := envFor(t, map[string]string{"HTTP_ADDR": fmt.Sprintf("127.0.0.1:%d", port), "TEMPORAL_ADDRESS": "127.0.0.1:1", "SHUTDOWN_TIMEOUT": "5s"})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"serve"}, env, &bytes.Buffer{}) }()
	url := fmt.Sprintf("http://127.0.0.1:%d/healthz", port)
	var ok bool
	for i := 0; i < 100 && !ok; i++ {
		res, err := http.Get(url)
		if err == nil {
			ok = res.StatusCode == 200
			res.Body.Close()
		}
		if !ok {
			time.Sleep(50 * time.Millisecond)
		}
	}
	if !ok {
		t.Fatal("serve never answered /healthz")
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve returned %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not stop")
	}
}
