package api_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/telcoplatform/platform/api"
	"github.com/telcoplatform/platform/auth"
	"github.com/telcoplatform/platform/config"
	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/operations"
	"github.com/telcoplatform/platform/ratelimit"
	"github.com/telcoplatform/platform/redisconn"
)

// listen serves the harness's server on a real listener (app.Test cannot
// hold a stream open) and returns its base URL.
func (h *harness) listen(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return h.serve(t, ln)
}

// smallSendBuffers is a listener whose connections have a kernel send
// buffer of about size bytes, so that a client that stops reading blocks
// the server's writes after that much, whatever the machine's TCP autotuning
// would otherwise buffer.
type smallSendBuffers struct {
	net.Listener
	size int
}

// Accept sets the accepted connection's send buffer.
func (l smallSendBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok && err == nil {
		if err := tc.SetWriteBuffer(l.size); err != nil {
			_ = c.Close()
			return nil, err
		}
	}
	return c, err
}

// listenSmallSendBuffers is listen with connections whose send buffer is
// about size bytes.
func (h *harness) listenSmallSendBuffers(t *testing.T, size int) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return h.serve(t, smallSendBuffers{Listener: ln, size: size})
}

// serve serves the harness's server on ln and returns its base URL.
func (h *harness) serve(t *testing.T, ln net.Listener) string {
	t.Helper()
	srv := h.srv
	go func() { _ = srv.App.Listener(ln) }()
	t.Cleanup(func() {
		// Streams end as at a real shutdown, so that no stream (and no
		// hub reading the event log for it) outlives the test's database.
		srv.EndStreams()
		_ = srv.App.ShutdownWithTimeout(2 * time.Second)
	})
	return "http://" + ln.Addr().String()
}

// streamServer replaces the harness's server with one that re-checks stream
// credentials every 100 ms, rate-limits through rdb (nil: no limiter) and
// allows maxStreams open streams per tenant.
func (h *harness) streamServer(rdb redis.UniversalClient, maxStreams int) {
	h.t.Helper()
	cfg, _ := config.Load(func(string) string { return "" })
	deps := api.Deps{Config: cfg, Store: h.store, Streams: api.StreamOptions{Recheck: 100 * time.Millisecond, MaxPerTenant: maxStreams}}
	if rdb != nil {
		deps.Redis, deps.Limiter = rdb, ratelimit.New(rdb)
	}
	h.srv = api.New(deps)
}

// runningOperation stores an operation of tenant 0 that never ends by itself.
func (h *harness) runningOperation(t *testing.T) string {
	t.Helper()
	id := models.NewID(models.PrefixProvisioning)
	scope := models.TenantScope(h.tenants[0].org.ID, models.EnvLive)
	if err := operations.NewStore(h.store).CreateOperation(context.Background(), scope, operations.NewOperation(id, operations.OpTypeProvisioning, "svc_x", "ak_x", operations.ProvisioningSteps(false), nil)); err != nil {
		t.Fatal(err)
	}
	return id
}

// openStream starts an event stream and returns it once its first bytes
// arrived, or the refusal.
func openStream(t *testing.T, base, path, key string) (*http.Response, *bufio.Reader) {
	t.Helper()
	req, _ := http.NewRequest("GET", base+path, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Accept", "text/event-stream")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Body.Close() })
	r := bufio.NewReader(res.Body)
	if res.StatusCode == 200 {
		if line, err := r.ReadString('\n'); err != nil || !strings.HasPrefix(line, "retry:") {
			t.Fatalf("stream did not start: %q %v", line, err)
		}
	}
	return res, r
}

// TestStreamsHoldTheirConcurrencySlot: with 3 requests in flight allowed,
// 3 open event streams leave no room: the next ordinary request is 429
// CONCURRENCY_LIMIT_EXCEEDED. Streams ending give the slots back.
func TestStreamsHoldTheirConcurrencySlot(t *testing.T) {
	rdb, _, closeFn, err := redisconn.Open(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = closeFn() })
	h := newHarness(t)
	h.streamServer(rdb, 0)
	h.do("PUT", "/v1/organizations/"+h.tenants[0].org.ID, h.adminKey, map[string]any{"plan": "custom",
		"custom_limits": map[string]any{"hourly": 1000, "burst": 100, "concurrent": 3}}).decode(200, nil)
	var streamer keyAnswer
	h.do("POST", "/v1/auth/api-keys", h.tenants[0].liveKey, map[string]any{"name": "streamer", "permissions": []string{"*"}}).decode(201, &streamer)
	base := h.listen(t)
	op := h.runningOperation(t)

	var readers []*bufio.Reader
	for i := 0; i < 3; i++ {
		res, r := openStream(t, base, "/v1/operations/"+op, streamer.APIKey.Key)
		if res.StatusCode != 200 {
			t.Fatalf("stream %d: status %d", i, res.StatusCode)
		}
		readers = append(readers, r)
	}
	h.do("GET", "/v1/services/catalog", h.tenants[0].liveKey, nil).wantError(429, "CONCURRENCY_LIMIT_EXCEEDED")

	// Revoking the key ends the streams within the re-check interval, with an error event.
	h.do("DELETE", "/v1/auth/api-keys/"+streamer.APIKey.ID, h.adminKey, nil).decode(200, nil) // the tenant has no slot left
	for i, r := range readers {
		rest := readUntilEOF(t, r, 3*time.Second)
		if !strings.Contains(rest, "event: error") || !strings.Contains(rest, "INVALID_API_KEY") {
			t.Fatalf("stream %d did not end with an error event: %q", i, rest)
		}
	}
	waitFor(t, func() bool { return h.do("GET", "/v1/services/catalog", h.tenants[0].liveKey, nil).status == 200 })
}

// TestStreamsPerTenantCap: beyond MaxPerTenant open streams a tenant gets
// 429 CONCURRENCY_LIMIT_EXCEEDED (details.kind event_streams), also without
// Redis; another tenant is not affected.
func TestStreamsPerTenantCap(t *testing.T) {
	h := newHarness(t)
	h.streamServer(nil, 2)
	base := h.listen(t)
	op := h.runningOperation(t)
	for i := 0; i < 2; i++ {
		if res, _ := openStream(t, base, "/v1/operations/"+op, h.tenants[0].liveKey); res.StatusCode != 200 {
			t.Fatalf("stream %d: status %d", i, res.StatusCode)
		}
	}
	res, r := openStream(t, base, "/v1/operations/"+op, h.tenants[0].liveKey)
	raw, _ := io.ReadAll(r)
	if res.StatusCode != 429 || !strings.Contains(string(raw), `"CONCURRENCY_LIMIT_EXCEEDED"`) || !strings.Contains(string(raw), `"event_streams"`) {
		t.Fatalf("third stream: %d %s", res.StatusCode, raw)
	}
	other := h.tenants[1]
	otherOp := models.NewID(models.PrefixProvisioning)
	if err := operations.NewStore(h.store).CreateOperation(context.Background(), models.TenantScope(other.org.ID, models.EnvLive),
		operations.NewOperation(otherOp, operations.OpTypeProvisioning, "svc_y", "ak_y", operations.ProvisioningSteps(false), nil)); err != nil {
		t.Fatal(err)
	}
	if res, _ := openStream(t, base, "/v1/operations/"+otherOp, other.liveKey); res.StatusCode != 200 {
		t.Fatalf("another tenant's stream: %d", res.StatusCode)
	}
}

// TestStreamEndsWhenItsTokenIsRevoked: an access token's stream ends, with
// an error event, within the re-check interval after the token is revoked.
func TestStreamEndsWhenItsTokenIsRevoked(t *testing.T) {
	h := newHarness(t)
	h.streamServer(nil, 0)
	base := h.listen(t)
	op := h.runningOperation(t)
	u := h.tokenUser(0)
	tok := h.issue(h.srv.Tokens(), auth.Grant{Subject: u.ID, OrganizationID: u.OrganizationID, Permissions: []string{"services:read"}, AuthMethod: "password"})
	res, r := openStream(t, base, "/v1/operations/"+op, tok.Token)
	if res.StatusCode != 200 {
		t.Fatalf("status %d", res.StatusCode)
	}
	if err := h.srv.Tokens().Revoke(context.Background(), tok.Token, "test"); err != nil {
		t.Fatal(err)
	}
	if rest := readUntilEOF(t, r, 3*time.Second); !strings.Contains(rest, "event: error") || !strings.Contains(rest, "INVALID_TOKEN") {
		t.Fatalf("the stream did not end with an error event: %q", rest)
	}
}

// readUntilEOF reads a stream until it ends, failing after d.
func readUntilEOF(t *testing.T, r *bufio.Reader, d time.Duration) string {
	t.Helper()
	done := make(chan string, 1)
	go func() {
		var b strings.Builder
		buf := make([]byte, 4096)
		for {
			n, err := r.Read(buf)
			b.Write(buf[:n])
			if err != nil {
				if !errors.Is(err, io.EOF) {
					b.WriteString("\n(read error: " + err.Error() + ")")
				}
				done <- b.String()
				return
			}
		}
	}()
	select {
	case s := <-done:
		return s
	case <-time.After(d):
		t.Fatalf("the stream did not end within %s", d)
		return ""
	}
}

// waitFor polls cond for up to 3 seconds.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatal("condition not met within 3 seconds")
}
