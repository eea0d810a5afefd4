package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

// TestSigningKeysCommand: rotate adds a key that signs while the first
// keeps verifying; retire stops the first; list shows each key's state;
// bad arguments and unknown kids are refused.
func TestSigningKeysCommand(t *testing.T) {
	ctx := context.Background()
	env := envFor(t, nil)
	cli := func(args ...string) (string, error) {
		var out bytes.Buffer
		err := run(ctx, args, env, &out)
		return out.String(), err
	}
	if _, err := cli("migrate"); err != nil {
		t.Fatal(err)
	}
	kidRe := regexp.MustCompile(`rsa_[A-Za-z0-9]+`)
	first, err := cli("signing-keys", "rotate")
	if err != nil || !kidRe.MatchString(first) {
		t.Fatalf("rotate: %q %v", first, err)
	}
	second, err := cli("signing-keys", "rotate")
	if err != nil {
		t.Fatal(err)
	}
	old, cur := kidRe.FindString(first), kidRe.FindString(second)
	list, err := cli("signing-keys", "list")
	if err != nil || !regexp.MustCompile(cur+`\s.*signs and verifies`).MatchString(list) || !regexp.MustCompile(old+`\s.*\sverifies`).MatchString(list) {
		t.Fatalf("list after two rotations:\n%s %v", list, err)
	}
	if out, err := cli("signing-keys", "retire", old); err != nil || !strings.Contains(out, "retired "+old) {
		t.Fatalf("retire: %q %v", out, err)
	}
	list, _ = cli("signing-keys", "list")
	if !regexp.MustCompile(old + `\s.*retired 20`).MatchString(list) {
		t.Fatalf("list after retiring %s:\n%s", old, list)
	}
	if _, err := cli("signing-keys", "retire", old); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("retiring a retired key: %v", err)
	}
	for _, bad := range [][]string{{"signing-keys"}, {"signing-keys", "retire"}, {"signing-keys", "list", "x"}, {"signing-keys", "spin"}} {
		if _, err := cli(bad...); err == nil || !strings.Contains(err.Error(), "usage: platform signing-keys") {
			t.Errorf("%v: %v", bad, err)
		}
	}
}

// TestHealthcheckCommand: 200 passes, anything else fails, and only
// loopback http:// addresses are asked.
func TestHealthcheckCommand(t *testing.T) {
	status := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(status) }))
	defer srv.Close()
	ctx := context.Background()
	var out bytes.Buffer
	if err := run(ctx, []string{"healthcheck", srv.URL + "/readyz"}, func(string) string { return "" }, &out); err != nil || out.String() != "ok\n" {
		t.Fatalf("ready: %q %v", out.String(), err)
	}
	status = http.StatusServiceUnavailable
	if err := run(ctx, []string{"healthcheck", srv.URL + "/readyz"}, func(string) string { return "" }, &out); err == nil || !strings.Contains(err.Error(), "503") {
		t.Fatalf("not ready: %v", err)
	}
	for _, bad := range [][]string{{"healthcheck"}, {"healthcheck", "https://127.0.0.1:1/readyz"}, {"healthcheck", "http://192.0.2.1:8080/readyz"}, {"healthcheck", "::"}} {
		if err := run(ctx, bad, func(string) string { return "" }, &out); err == nil {
			t.Errorf("%v passed", bad)
		}
	}
}
