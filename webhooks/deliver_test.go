package webhooks

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/telcoplatform/platform/models"
)

// verifyingReceiver answers 200 "ok" when the request is a well-formed,
// correctly signed Standard Webhooks delivery for secret, 400 with the
// reason otherwise.
func verifyingReceiver(t *testing.T, secret string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		switch {
		case r.Method != http.MethodPost:
			http.Error(w, "method "+r.Method, http.StatusBadRequest)
			return
		case r.Header.Get("Content-Type") != "application/json":
			http.Error(w, "content-type "+r.Header.Get("Content-Type"), http.StatusBadRequest)
			return
		case r.Header.Get("User-Agent") != UserAgent:
			http.Error(w, "user-agent "+r.Header.Get("User-Agent"), http.StatusBadRequest)
			return
		}
		wh, err := standardwebhooks.NewWebhook(secret)
		if err != nil {
			t.Error(err)
			return
		}
		if err := wh.Verify(body, r.Header); err != nil {
			http.Error(w, "verify: "+err.Error(), http.StatusBadRequest)
			return
		}
		_, _ = io.WriteString(w, "ok")
	}
}

func TestDeliver(t *testing.T) {
	current, previous := NewSecret(), NewSecret()
	body, err := Payload("evt_1", EventServiceDown, time.Now(), map[string]any{"service_id": "svc_1"})
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("e", 3000)
	var elsewhere atomic.Int32

	tests := []struct {
		name       string
		handler    func(release <-chan struct{}) http.Handler
		secrets    []string
		timeout    time.Duration
		wantOK     bool
		wantStatus int
		wantError  string // substring; "" means no error
		wantPrefix string
	}{
		{
			name:       "200 receiver verifies with the official library",
			handler:    func(<-chan struct{}) http.Handler { return verifyingReceiver(t, current) },
			secrets:    []string{current},
			wantOK:     true,
			wantStatus: 200,
			wantPrefix: "ok",
		},
		{
			name:       "rotation: receiver still on the previous secret",
			handler:    func(<-chan struct{}) http.Handler { return verifyingReceiver(t, previous) },
			secrets:    []string{current, previous},
			wantOK:     true,
			wantStatus: 200,
			wantPrefix: "ok",
		},
		{
			name:       "rotation: receiver already on the current secret",
			handler:    func(<-chan struct{}) http.Handler { return verifyingReceiver(t, current) },
			secrets:    []string{current, previous},
			wantOK:     true,
			wantStatus: 200,
			wantPrefix: "ok",
		},
		{
			name:       "receiver with another secret rejects",
			handler:    func(<-chan struct{}) http.Handler { return verifyingReceiver(t, NewSecret()) },
			secrets:    []string{current},
			wantStatus: 400,
			wantError:  "HTTP 400",
			wantPrefix: "verify: unable to verify payload, err: no matching signature found\n",
		},
		{
			name: "204 without body",
			handler: func(<-chan struct{}) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
			},
			secrets:    []string{current},
			wantOK:     true,
			wantStatus: 204,
		},
		{
			name: "500 receiver",
			handler: func(<-chan struct{}) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
					w.WriteHeader(http.StatusInternalServerError)
					_, _ = io.WriteString(w, long)
				})
			},
			secrets:    []string{current},
			wantStatus: 500,
			wantError:  "HTTP 500",
			wantPrefix: long[:ResponseBodyPrefixLimit],
		},
		{
			name: "slow receiver exceeds the timeout",
			handler: func(release <-chan struct{}) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					select {
					case <-r.Context().Done():
					case <-release:
					}
				})
			},
			secrets:   []string{current},
			timeout:   50 * time.Millisecond,
			wantError: "timeout",
		},
		{
			name: "redirect is not followed",
			handler: func(<-chan struct{}) http.Handler {
				mux := http.NewServeMux()
				mux.HandleFunc("/hook", func(w http.ResponseWriter, r *http.Request) {
					http.Redirect(w, r, "/elsewhere", http.StatusFound)
				})
				mux.HandleFunc("/elsewhere", func(w http.ResponseWriter, _ *http.Request) {
					elsewhere.Add(1)
				})
				return mux
			},
			secrets:    []string{current},
			wantStatus: 302,
			wantError:  "redirect not followed",
			wantPrefix: "", // http.Redirect writes no body for POST
		},
		{
			name:      "invalid secret",
			handler:   func(<-chan struct{}) http.Handler { return verifyingReceiver(t, current) },
			secrets:   []string{"whsec_tooshort"},
			wantError: "signing failed",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			release := make(chan struct{})
			var hits atomic.Int32
			h := tt.handler(release)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				hits.Add(1)
				h.ServeHTTP(w, r)
			}))
			t.Cleanup(srv.Close)
			t.Cleanup(func() { close(release) }) // runs before srv.Close

			c := NewClient(true, WithTimeout(tt.timeout))
			t.Cleanup(c.CloseIdleConnections)
			a := c.Deliver(context.Background(), srv.URL+"/hook", tt.secrets, "evt_1", time.Now(), body)

			if a.Success != tt.wantOK || a.StatusCode != tt.wantStatus {
				t.Fatalf("attempt = %+v, want success %v status %d", a, tt.wantOK, tt.wantStatus)
			}
			if tt.wantError == "" && a.Error != "" || !strings.Contains(a.Error, tt.wantError) {
				t.Fatalf("Error = %q, want it to contain %q", a.Error, tt.wantError)
			}
			if a.ResponseBodyPrefix != tt.wantPrefix {
				t.Fatalf("ResponseBodyPrefix = %q, want %q", a.ResponseBodyPrefix, tt.wantPrefix)
			}
			if a.Latency <= 0 {
				t.Fatalf("Latency = %v", a.Latency)
			}
			if tt.wantError == "signing failed" && hits.Load() != 0 {
				t.Fatal("the receiver was called although signing failed")
			}
		})
	}
	if n := elsewhere.Load(); n != 0 {
		t.Fatalf("the redirect target got %d requests", n)
	}
}

// TestDeliverFailures covers failures before any HTTP response.
func TestDeliverFailures(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	t.Cleanup(srv.Close)

	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedURL := "http://" + closed.Addr().String() + "/hook"
	_ = closed.Close()

	nx := resolverFunc(func(_ context.Context, _, host string) ([]netip.Addr, error) {
		return nil, &net.DNSError{Err: "no such host", Name: host, Server: "10.0.0.2:53", IsNotFound: true}
	})
	canceled, cancel := context.WithCancel(context.Background())
	cancel()

	tests := []struct {
		name      string
		client    *Client
		ctx       context.Context
		url       string
		wantError string
	}{
		{"private URL refused before connecting", NewClient(false), context.Background(), srv.URL + "/hook", "url refused: url: host resolves to a loopback"},
		{"bad scheme", NewClient(true), context.Background(), "gopher://127.0.0.1/", "url refused: url: scheme must be http or https"},
		{"connection refused", NewClient(true), context.Background(), closedURL, "connection refused"},
		{"unknown host", NewClient(true, WithResolver(nx)), context.Background(), "http://nowhere.example/hook", "DNS lookup of nowhere.example failed: no such host"},
		{"canceled context", NewClient(true), canceled, srv.URL + "/hook", "canceled"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Cleanup(tt.client.CloseIdleConnections)
			a := tt.client.Deliver(tt.ctx, tt.url, []string{NewSecret()}, "msg_1", time.Now(), []byte(`{}`))
			if a.Success || a.StatusCode != 0 {
				t.Fatalf("attempt = %+v, want a failure without a response", a)
			}
			if !strings.Contains(a.Error, tt.wantError) {
				t.Fatalf("Error = %q, want it to contain %q", a.Error, tt.wantError)
			}
			if strings.Contains(a.Error, "10.0.0.2") {
				t.Fatalf("Error %q reveals the DNS server", a.Error)
			}
		})
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("receiver got %d requests", n)
	}
}

// TestClientTransport checks the settings that are not observable on
// loopback: no proxy from the environment, no redirects, the timeout.
func TestClientTransport(t *testing.T) {
	c := NewClient(false)
	tr, ok := c.hc.Transport.(*http.Transport)
	if !ok {
		t.Fatalf("transport %T", c.hc.Transport)
	}
	if tr.Proxy != nil {
		t.Fatal("the transport uses a proxy")
	}
	if c.hc.Timeout != DefaultTimeout {
		t.Fatalf("timeout %v, want %v", c.hc.Timeout, DefaultTimeout)
	}
	if err := c.hc.CheckRedirect(nil, nil); err != http.ErrUseLastResponse {
		t.Fatalf("CheckRedirect = %v", err)
	}
	if d := NewClient(false, WithTimeout(-1)).timeout; d != DefaultTimeout {
		t.Fatalf("WithTimeout(-1) gave %v", d)
	}
}

func TestTextPrefix(t *testing.T) {
	euro := "€" // 3 bytes
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"ascii", "hello", "hello"},
		{"rune cut by the limit", strings.Repeat("a", ResponseBodyPrefixLimit-1) + euro[:1], strings.Repeat("a", ResponseBodyPrefixLimit-1)},
		{"rune cut after two bytes", strings.Repeat("a", ResponseBodyPrefixLimit-2) + euro[:2], strings.Repeat("a", ResponseBodyPrefixLimit-2)},
		{"whole rune at the end", strings.Repeat("a", ResponseBodyPrefixLimit-3) + euro, strings.Repeat("a", ResponseBodyPrefixLimit-3) + euro},
		{"invalid byte", "a\xffb", "a\uFFFDb"},
		{"NUL removed", "a\x00b", "ab"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := textPrefix([]byte(tt.in))
			if got != tt.want {
				t.Fatalf("textPrefix = %q, want %q", got, tt.want)
			}
			if !utf8.ValidString(got) {
				t.Fatal("not valid UTF-8")
			}
		})
	}
}

func TestPayload(t *testing.T) {
	ts := time.Date(2026, 1, 2, 4, 4, 5, 123456789, time.FixedZone("CET", 3600))
	tests := []struct {
		name  string
		id    string
		event string
		data  any
		want  string
		field string // expected invalid field; "" = success
	}{
		{"canonical", "evt_1", "service.down", map[string]string{"service_id": "svc_1"},
			`{"id":"evt_1","event":"service.down","timestamp":"2026-01-02T03:04:05Z","data":{"service_id":"svc_1"}}`, ""},
		{"alias canonicalised", "evt_2", "invoice.generated", struct {
			InvoiceID string `json:"invoice_id"`
		}{"inv_1"},
			`{"id":"evt_2","event":"invoice.created","timestamp":"2026-01-02T03:04:05Z","data":{"invoice_id":"inv_1"}}`, ""},
		{"test ping with nil data", "evt_3", EventTest, nil,
			`{"id":"evt_3","event":"webhook.test","timestamp":"2026-01-02T03:04:05Z","data":{}}`, ""},
		{"raw JSON data", "evt_4", "sla.breach", json.RawMessage(`{"ticket_id":"tkt_1"}`),
			`{"id":"evt_4","event":"sla.breach","timestamp":"2026-01-02T03:04:05Z","data":{"ticket_id":"tkt_1"}}`, ""},
		{"unknown event", "evt_5", "service.exploded", nil, "", "event"},
		{"empty id", "", "service.down", nil, "", "id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Payload(tt.id, tt.event, ts, tt.data)
			if tt.field != "" {
				if fields := fieldsOf(t, err); len(fields) != 1 || fields[0] != tt.field {
					t.Fatalf("fields = %v, want [%s]", fields, tt.field)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Fatalf("Payload = %s\nwant      %s", got, tt.want)
			}
		})
	}
	if _, err := Payload("evt_6", "service.down", time.Time{}, nil); err == nil {
		t.Fatal("zero timestamp accepted")
	}
	_, err := Payload("evt_7", "service.down", ts, map[string]any{"bad": make(chan int)})
	wantCode(t, err, models.CodeInternal)
}
