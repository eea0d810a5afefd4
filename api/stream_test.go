package api_test

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fasthttp/websocket"
	"gorm.io/gorm"

	"github.com/telcoplatform/platform/api"
	"github.com/telcoplatform/platform/auth"
	"github.com/telcoplatform/platform/config"
	"github.com/telcoplatform/platform/metrics"
	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/eventlog"
)

// rtServer replaces the harness's server with one whose real-time streams
// settle and poll quickly, with buffer events of room and writes that
// time out after writeTimeout; it returns the server's metrics.
func (h *harness) rtServer(buffer int, writeTimeout time.Duration) *metrics.Metrics {
	h.t.Helper()
	cfg, _ := config.Load(func(string) string { return "" })
	m := metrics.New()
	h.srv = api.New(api.Deps{Config: cfg, Store: h.store, Metrics: m, Streams: api.StreamOptions{Settle: 50 * time.Millisecond,
		Poll: 50 * time.Millisecond, Buffer: buffer, WriteTimeout: writeTimeout, CredentialCheck: 100 * time.Millisecond}})
	return m
}

// recordEvents writes n events of typ about resource for tenant i in env,
// each with data padded to about pad bytes, one transaction each unless
// pad is large (then one transaction for all).
func (h *harness) recordEvents(t testing.TB, i int, env models.Environment, typ, resource string, n, pad int) []string {
	t.Helper()
	scope := models.TenantScope(h.tenants[i].org.ID, env)
	var ids []string
	var evs []*eventlog.Event
	for k := 0; k < n; k++ {
		ev := eventlog.NewEvent(typ, resource, map[string]any{"n": k, "pad": strings.Repeat("x", pad)})
		ids, evs = append(ids, ev.ID), append(evs, ev)
	}
	write := func(evs []*eventlog.Event) {
		if err := h.store.Tx(context.Background(), scope, func(tx *gorm.DB) error {
			for _, ev := range evs {
				if err := eventlog.RecordEvent(tx, ev); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	if pad > 1000 {
		write(evs)
		return ids
	}
	for _, ev := range evs {
		write([]*eventlog.Event{ev})
	}
	return ids
}

// sseEvent is one Server-Sent Event.
type sseEvent struct{ id, name, data string }

// sseStream opens GET path as Server-Sent Events with key (and extra
// headers as pairs) and returns its events as they come.
func sseStream(t *testing.T, base, path, key string, headers ...string) (*http.Response, <-chan sseEvent) {
	t.Helper()
	req, _ := http.NewRequest("GET", base+path, nil)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	req.Header.Set("Accept", "text/event-stream")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Body.Close() })
	ch := make(chan sseEvent, 1000)
	go func() {
		defer close(ch)
		r := bufio.NewReader(res.Body)
		var ev sseEvent
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			line = strings.TrimRight(line, "\n")
			switch {
			case line == "":
				if ev.name != "" {
					ch <- ev
				}
				ev = sseEvent{}
			case strings.HasPrefix(line, "id: "):
				ev.id = line[4:]
			case strings.HasPrefix(line, "event: "):
				ev.name = line[7:]
			case strings.HasPrefix(line, "data: "):
				ev.data = line[6:]
			}
		}
	}()
	return res, ch
}

// nextEvents reads n events within a few seconds.
func nextEvents(t *testing.T, ch <-chan sseEvent, n int) []sseEvent {
	t.Helper()
	var out []sseEvent
	timeout := time.After(5 * time.Second)
	for len(out) < n {
		select {
		case ev, ok := <-ch:
			if !ok {
				t.Fatalf("stream ended after %d of %d events: %+v", len(out), n, out)
			}
			out = append(out, ev)
		case <-timeout:
			t.Fatalf("%d of %d events within 5 s: %+v", len(out), n, out)
		}
	}
	return out
}

// quiet checks that no event comes within d.
func quiet(t *testing.T, ch <-chan sseEvent, d time.Duration) {
	t.Helper()
	select {
	case ev, ok := <-ch:
		if ok {
			t.Fatalf("unexpected event %+v", ev)
		}
	case <-time.After(d):
	}
}

// TestStreamRefusals: the stream's errors have the documented shape:
// no credential, bad patterns, an unknown resume point, a plain GET, a
// spent or forged stream token.
func TestStreamRefusals(t *testing.T) {
	h := newHarness(t)
	key := h.tenants[0].liveKey
	sse := []string{"Accept", "text/event-stream"}
	h.do("GET", "/v1/stream", "", nil, sse...).wantError(401, "UNAUTHENTICATED")
	e := h.do("GET", "/v1/stream?types=service.*,nonsense.*", key, nil, sse...).wantError(400, "VALIDATION_ERROR")
	if !strings.Contains(string(encodeJSON(t, e.Error.Details)), "types") {
		t.Fatalf("details do not name types: %+v", e.Error.Details)
	}
	h.do("GET", "/v1/stream?after=evt_doesnotexist", key, nil, sse...).wantError(400, "VALIDATION_ERROR")
	h.do("GET", "/v1/stream", key, nil, "Last-Event-ID", "not-an-id", sse[0], sse[1]).wantError(400, "VALIDATION_ERROR")
	h.do("GET", "/v1/stream", key, nil).wantError(400, "VALIDATION_ERROR")
	h.do("GET", "/v1/stream?operations=prov_nope", key, nil, sse...).wantError(404, "NOT_FOUND")
	// Another tenant's event is no resume point.
	other := h.recordEvents(t, 1, models.EnvLive, "service.provisioned", "svc_b", 1, 0)
	h.do("GET", "/v1/stream?after="+other[0], key, nil, sse...).wantError(400, "VALIDATION_ERROR")

	h.do("GET", "/v1/stream?token=stk_forged", "", nil, sse...).wantError(401, "INVALID_TOKEN")
	var tok struct {
		Token     string `json:"token"`
		ExpiresIn int    `json:"expires_in"`
	}
	h.do("POST", "/v1/stream/token", key, nil).decode(201, &tok)
	if !strings.HasPrefix(tok.Token, "stk_") || tok.ExpiresIn != 60 {
		t.Fatalf("token answer %+v", tok)
	}
	// A token is for the stream alone: another path ignores it.
	h.do("GET", "/v1/services/catalog?token="+tok.Token, "", nil).wantError(401, "UNAUTHENTICATED")
	// HEAD spends it without opening a stream; the second use is refused.
	h.do("HEAD", "/v1/stream?token="+url.QueryEscape(tok.Token), "", nil, sse...).decode(200, nil)
	if r := h.do("HEAD", "/v1/stream?token="+url.QueryEscape(tok.Token), "", nil, sse...); r.status != 401 {
		t.Fatalf("a spent token: %d", r.status)
	}
}

// TestStreamSSEFiltersAndResumes: an SSE stream sends the caller's events
// in order with the webhook payload, filtered by pattern and resource;
// reconnecting with Last-Event-ID (or after=) sends what came meanwhile,
// without a gap or a duplicate. A test-mode key never sees live events,
// and another tenant sees none of them.
func TestStreamSSEFiltersAndResumes(t *testing.T) {
	h := newHarness(t)
	h.rtServer(0, 0)
	base := h.listen(t)
	key := h.tenants[0].liveKey

	res, live := sseStream(t, base, "/v1/stream?types=service.*&resource_id=svc_a", key)
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("stream: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	_, testMode := sseStream(t, base, "/v1/stream", h.tenants[0].testKey)
	_, otherTenant := sseStream(t, base, "/v1/stream", h.tenants[1].liveKey)
	time.Sleep(100 * time.Millisecond) // the streams are open

	first := h.recordEvents(t, 0, models.EnvLive, "service.provisioned", "svc_a", 3, 0)
	h.recordEvents(t, 0, models.EnvLive, "service.provisioned", "svc_other", 1, 0) // another resource
	h.recordEvents(t, 0, models.EnvLive, "ticket.escalated", "svc_a", 1, 0)        // another type
	got := nextEvents(t, live, 3)
	for i, ev := range got {
		var payload struct {
			ID, Event, Timestamp string
			Data                 map[string]any
		}
		if err := json.Unmarshal([]byte(ev.data), &payload); err != nil {
			t.Fatal(err)
		}
		if ev.id != first[i] || ev.name != "service.provisioned" || payload.ID != first[i] || payload.Event != "service.provisioned" || payload.Data["n"] != float64(i) {
			t.Fatalf("event %d: %+v (want %s)", i, ev, first[i])
		}
	}
	quiet(t, live, 300*time.Millisecond)
	quiet(t, testMode, 0)
	quiet(t, otherTenant, 0)

	// Gone after the second event; three more happen; the reconnection
	// with Last-Event-ID gets the third and the three new ones.
	res.Body.Close()
	more := h.recordEvents(t, 0, models.EnvLive, "service.modified", "svc_a", 3, 0)
	_, resumed := sseStream(t, base, "/v1/stream?types=service.*&resource_id=svc_a", key, "Last-Event-ID", first[1])
	got = nextEvents(t, resumed, 4)
	want := append([]string{first[2]}, more...)
	for i, ev := range got {
		if ev.id != want[i] {
			t.Fatalf("resumed event %d is %s, want %s (all: %+v)", i, ev.id, want[i], got)
		}
	}
	quiet(t, resumed, 300*time.Millisecond)
	// after= works the same, and a live event follows the backlog.
	_, again := sseStream(t, base, "/v1/stream?types=service.modified&after="+more[1], key)
	if ev := nextEvents(t, again, 1)[0]; ev.id != more[2] {
		t.Fatalf("after=: %+v, want %s", ev, more[2])
	}
	later := h.recordEvents(t, 0, models.EnvLive, "service.modified", "svc_z", 1, 0)
	if ev := nextEvents(t, again, 1)[0]; ev.id != later[0] {
		t.Fatalf("live after the backlog: %+v, want %s", ev, later[0])
	}
	// The test-mode stream sees test-mode events only.
	testEv := h.recordEvents(t, 0, models.EnvTest, "service.provisioned", "svc_t", 1, 0)
	if ev := nextEvents(t, testMode, 1)[0]; ev.id != testEv[0] {
		t.Fatalf("test mode: %+v", ev)
	}
	quiet(t, otherTenant, 200*time.Millisecond)
}

// TestStreamWebSocketTokenAndRevocation: a browser-style WebSocket opened
// with a stream token gets the events as JSON messages; revoking the key
// that minted the token closes it with 1008 and the error code.
func TestStreamWebSocketTokenAndRevocation(t *testing.T) {
	h := newHarness(t)
	h.rtServer(0, 0)
	base := h.listen(t)
	var k keyAnswer
	h.do("POST", "/v1/auth/api-keys", h.tenants[0].liveKey, map[string]any{"name": "browser", "permissions": []string{"services:read"}}).decode(201, &k)
	var tok struct{ Token string }
	h.do("POST", "/v1/stream/token", k.APIKey.Key, nil).decode(201, &tok)
	conn, res, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(base, "http")+"/v1/stream?token="+url.QueryEscape(tok.Token), nil)
	if err != nil {
		t.Fatalf("dial: %v (%v)", err, res)
	}
	defer conn.Close()
	time.Sleep(100 * time.Millisecond)
	ids := h.recordEvents(t, 0, models.EnvLive, "service.provisioned", "svc_a", 2, 0)
	h.recordEvents(t, 0, models.EnvLive, "invoice.created", "inv_a", 1, 0) // not readable with services:read
	for i := range ids {
		_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		var msg struct{ ID, Event string }
		if err := conn.ReadJSON(&msg); err != nil {
			t.Fatal(err)
		}
		if msg.ID != ids[i] || msg.Event != "service.provisioned" {
			t.Fatalf("message %d: %+v, want %s", i, msg, ids[i])
		}
	}
	h.do("DELETE", "/v1/auth/api-keys/"+k.APIKey.ID, h.tenants[0].liveKey, nil).decode(200, nil)
	_ = conn.SetReadDeadline(time.Now().Add(3 * time.Second))
	_, raw, err := conn.ReadMessage()
	var ce *websocket.CloseError
	if !errorsAs(err, &ce) || ce.Code != websocket.ClosePolicyViolation || !strings.HasPrefix(ce.Text, "INVALID_API_KEY") {
		t.Fatalf("after the revocation: %v %s", err, raw)
	}
}

func errorsAs(err error, target **websocket.CloseError) bool {
	ce, ok := err.(*websocket.CloseError)
	if ok {
		*target = ce
	}
	return ok
}

// TestStreamSlowConsumer: a client that never reads is disconnected
// instead of growing the server's memory, and the metric counts it.
func TestStreamSlowConsumer(t *testing.T) {
	got := slowConsumer(t, 300*time.Millisecond, 0)
	// The server ended the answer, after the few events it had room for,
	// with the reason when it could still write it. When a write timed
	// out, the connection could take nothing more and is closed.
	if !got.closed && (!strings.Contains(got.body, "event: error") || !strings.Contains(got.body, `"SLOW_CONSUMER"`)) {
		t.Fatalf("the answer does not end with the reason: %q", got.body[max(0, len(got.body)-300):])
	}
}

// TestStreamFellBehindGetsTheReason: a client that stops reading while
// events keep coming falls more than the buffer behind; once it reads
// again (before the write timeout), the answer ends with the reason.
func TestStreamFellBehindGetsTheReason(t *testing.T) {
	got := slowConsumer(t, 10*time.Second, time.Second)
	if got.closed || !strings.Contains(got.body, "event: error") || !strings.Contains(got.body, `"SLOW_CONSUMER"`) {
		t.Fatalf("the answer does not end with the reason (closed %v): %q", got.closed, got.body[max(0, len(got.body)-300):])
	}
}

type slowAnswer struct {
	body   string
	closed bool // the server closed the connection without ending the answer
}

// slowConsumer opens a stream (room for 8 events, writes timing out after
// writeTimeout) on a connection with small buffers, records about 6.5 MB
// of events and reads nothing for pause (none: until the server counted
// a slow consumer), then reads the answer to its end. It checks that
// exactly one slow consumer was counted and that no more than the
// buffer's events (and what the buffers held) were written.
func slowConsumer(t *testing.T, writeTimeout, pause time.Duration) slowAnswer {
	t.Helper()
	h := newHarness(t)
	m := h.rtServer(8, writeTimeout)
	// Both ends' buffers are small: a loopback connection's autotuned
	// send buffer could otherwise hold the whole backlog on some machines.
	base := h.listenSmallSendBuffers(t, 4096)
	d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		return c.Control(func(fd uintptr) { _ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
	}}
	conn, err := d.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte("GET /v1/stream HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\nAuthorization: Bearer " + h.tenants[0].liveKey + "\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	// The stream is open (its position in the event log taken) once its
	// first bytes arrive: the events written next are the stream's to send.
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	var got []byte
	buf := make([]byte, 1<<16)
	for !strings.Contains(string(got), "retry: 2000\n\n") {
		n, err := conn.Read(buf)
		got = append(got, buf[:n]...)
		if err != nil {
			t.Fatalf("opening the stream: %v after %q", err, got)
		}
	}
	h.recordEvents(t, 0, models.EnvLive, "service.provisioned", "svc_a", 400, 16<<10) // ~6.5 MB
	slow := func() float64 { return streamDisconnects(t, m, "slow_consumer") }
	if pause > 0 {
		time.Sleep(pause)
	} else {
		deadline := time.Now().Add(10 * time.Second)
		for slow() == 0 && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
	}
	_ = conn.SetReadDeadline(time.Now().Add(writeTimeout + 5*time.Second))
	out := slowAnswer{}
	for !strings.HasSuffix(string(got), "\r\n0\r\n\r\n") && !out.closed {
		n, err := conn.Read(buf)
		got = append(got, buf[:n]...)
		switch {
		case errors.Is(err, io.EOF), errors.Is(err, syscall.ECONNRESET):
			out.closed = true
		case err != nil:
			t.Fatalf("reading the answer: %v after %d bytes", err, len(got))
		}
	}
	if slow() != 1 {
		t.Fatalf("slow consumers counted: %v", slow())
	}
	if sent := strings.Count(string(got), "event: service.provisioned"); sent > 8+2 {
		t.Fatalf("%d events were written to a client that did not read", sent)
	}
	out.body = string(got)
	return out
}

// streamDisconnects reads platform_stream_disconnects_total{reason}.
func streamDisconnects(t *testing.T, m *metrics.Metrics, reason string) float64 {
	t.Helper()
	fams, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != "platform_stream_disconnects_total" {
			continue
		}
		for _, mt := range f.GetMetric() {
			for _, l := range mt.GetLabel() {
				if l.GetName() == "reason" && l.GetValue() == reason {
					return mt.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

// TestStreamTokenSealsAReference: a stream token seals a reference to the
// minting credential, never its secret (opened with the sealing key, it
// names the key's id and the stream's path, not the key), and a token of
// a key revoked after minting opens nothing (401 INVALID_API_KEY); an
// access token's stream token carries its claims, not the token, and one
// deny-listed after minting opens nothing either.
func TestStreamTokenSealsAReference(t *testing.T) {
	h := newHarness(t)
	h.rtServer(0, 0)
	base := h.listen(t)
	var k keyAnswer
	h.do("POST", "/v1/auth/api-keys", h.tenants[0].liveKey, map[string]any{"name": "browser", "permissions": []string{"services:read"}}).decode(201, &k)
	mint := func(cred string) string {
		t.Helper()
		var tok struct{ Token string }
		h.do("POST", "/v1/stream/token", cred, nil).decode(201, &tok)
		return tok.Token
	}
	sealed := func(token string) string {
		t.Helper()
		raw, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(token, "stk_"))
		if err != nil {
			t.Fatal(err)
		}
		plain, err := h.store.Sealer.Open("stream-token", string(raw))
		if err != nil {
			t.Fatal(err)
		}
		return plain
	}
	open := func(token string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", base+"/v1/stream?token="+url.QueryEscape(token), nil)
		req.Header.Set("Accept", "text/event-stream")
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		res, err := http.DefaultClient.Do(req.WithContext(ctx))
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		if res.StatusCode == http.StatusOK {
			return res.StatusCode, ""
		}
		var e struct{ Error struct{ Code string } }
		_ = json.NewDecoder(res.Body).Decode(&e)
		return res.StatusCode, e.Error.Code
	}

	token := mint(k.APIKey.Key)
	plain := sealed(token)
	if strings.Contains(token, k.APIKey.Key) || strings.Contains(plain, k.APIKey.Key) || strings.Contains(plain, k.APIKey.Key[len(k.APIKey.Key)-16:]) ||
		!strings.Contains(plain, k.APIKey.ID) || !strings.Contains(plain, "/v1/stream") {
		t.Fatalf("the sealed stream token of key %s: %s", k.APIKey.ID, plain)
	}
	if status, _ := open(mint(k.APIKey.Key)); status != http.StatusOK {
		t.Fatalf("a stream token of a live key: %d", status)
	}
	h.do("DELETE", "/v1/auth/api-keys/"+k.APIKey.ID, h.tenants[0].liveKey, nil).decode(200, nil)
	if status, code := open(token); status != http.StatusUnauthorized || code != "INVALID_API_KEY" {
		t.Fatalf("a stream token of a revoked key: %d %s", status, code)
	}

	var created struct {
		User struct{ ID string } `json:"user"`
	}
	h.do("POST", "/v1/users", h.adminKey, map[string]any{"email": "streamer@tenant-a.example", "name": "Streamer", "role": "customer",
		"organization_id": h.tenants[0].org.ID, "password": "correct horse battery"}).decode(201, &created)
	issued := h.issue(h.srv.Tokens(), auth.Grant{Subject: created.User.ID, OrganizationID: h.tenants[0].org.ID, Permissions: []string{"services:read"}, AuthMethod: "password"})
	token = mint(issued.Token)
	if plain := sealed(token); strings.Contains(plain, issued.Token) || strings.Contains(plain, strings.Split(issued.Token, ".")[2]) || !strings.Contains(plain, issued.JTI) {
		t.Fatalf("the sealed stream token of an access token: %s", plain)
	}
	if status, _ := open(mint(issued.Token)); status != http.StatusOK {
		t.Fatalf("a stream token of a live access token: %d", status)
	}
	if err := h.srv.Tokens().Revoke(context.Background(), issued.Token, "test"); err != nil {
		t.Fatal(err)
	}
	if status, code := open(token); status != http.StatusUnauthorized || code != "INVALID_TOKEN" {
		t.Fatalf("a stream token of a revoked access token: %d %s", status, code)
	}
}

// TestStreamLateCommit: an event whose transaction commits late (after a
// newer event of another transaction has committed, and later than the
// settle delay) still reaches the open stream, in the log's order. On
// PostgreSQL the stream waits for the open transaction (the log's
// horizon); SQLite's single writer commits the older event first.
func TestStreamLateCommit(t *testing.T) {
	h := newHarness(t)
	h.rtServer(0, 0) // events settle after 50 ms
	base := h.listen(t)
	_, events := sseStream(t, base, "/v1/stream", h.tenants[0].liveKey)
	time.Sleep(100 * time.Millisecond) // the stream is open

	scope := models.TenantScope(h.tenants[0].org.ID, models.EnvLive)
	late := eventlog.NewEvent("service.provisioned", "svc_late", map[string]any{})
	inserted, committed := make(chan struct{}), make(chan error, 1)
	go func() {
		committed <- h.store.Tx(context.Background(), scope, func(tx *gorm.DB) error {
			if err := eventlog.RecordEvent(tx, late); err != nil {
				return err
			}
			close(inserted)
			time.Sleep(1500 * time.Millisecond) // a slow transaction: far beyond the settle delay
			return nil
		})
	}()
	<-inserted
	time.Sleep(50 * time.Millisecond)
	newer := h.recordEvents(t, 0, models.EnvLive, "service.provisioned", "svc_newer", 1, 0)
	if err := <-committed; err != nil {
		t.Fatal(err)
	}
	got := nextEvents(t, events, 2)
	if got[0].id != late.ID || got[1].id != newer[0] {
		t.Fatalf("events %s, %s; want the late commit %s, then %s", got[0].id, got[1].id, late.ID, newer[0])
	}
}

// TestStreamTokenEndsWithItsSigningKey: an access token's stream token
// seals the token's kid; once that signing key is retired (an emergency
// revocation), the stream token opens nothing (401 INVALID_TOKEN) and a
// stream it opened before ends, as the access token's own would.
func TestStreamTokenEndsWithItsSigningKey(t *testing.T) {
	h := newHarness(t)
	h.rtServer(0, 0) // credentials checked every 100 ms
	base := h.listen(t)
	u := h.tokenUser(0)
	tokens := h.srv.Tokens()
	issued := h.issue(tokens, auth.Grant{Subject: u.ID, OrganizationID: u.OrganizationID, Permissions: []string{"services:read"}, AuthMethod: "password"})
	mint := func() string {
		t.Helper()
		var tok struct{ Token string }
		h.do("POST", "/v1/stream/token", issued.Token, nil).decode(201, &tok)
		return tok.Token
	}
	first, second := mint(), mint()
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(first, "stk_"))
	if err != nil {
		t.Fatal(err)
	}
	if plain, err := h.store.Sealer.Open("stream-token", string(raw)); err != nil || !strings.Contains(plain, `"kid":"`+issued.KeyID+`"`) {
		t.Fatalf("the sealed stream token does not name its signing key %s: %s %v", issued.KeyID, plain, err)
	}
	res, events := sseStream(t, base, "/v1/stream?token="+url.QueryEscape(first), "")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("a stream token of a live access token: %d", res.StatusCode)
	}
	time.Sleep(200 * time.Millisecond) // open, and its credential checked at least once
	quiet(t, events, 0)

	if _, err := tokens.Keys().Rotate(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := tokens.Keys().RetireKey(context.Background(), issued.KeyID); err != nil {
		t.Fatal(err)
	}
	// A plain request: sseStream's reader would race this decoding for the body.
	res2, err := http.Get(base + "/v1/stream?token=" + url.QueryEscape(second))
	if err != nil {
		t.Fatal(err)
	}
	defer res2.Body.Close()
	var e struct{ Error struct{ Code string } }
	_ = json.NewDecoder(res2.Body).Decode(&e)
	if res2.StatusCode != http.StatusUnauthorized || e.Error.Code != "INVALID_TOKEN" {
		t.Fatalf("a stream token of a retired signing key: %d %s", res2.StatusCode, e.Error.Code)
	}
	ev := nextEvents(t, events, 1)[0]
	if ev.name != "error" || !strings.Contains(ev.data, `"INVALID_TOKEN"`) {
		t.Fatalf("the open stream after its signing key was retired: %+v", ev)
	}
}

// TestStreamHorizonMaxLag: on PostgreSQL a session left idle in a
// transaction that has written holds every stream back, but no longer than
// the maximum lag: an event committed meanwhile by another transaction
// still arrives, after about the maximum lag, and the metric counts the
// capped reads.
func TestStreamHorizonMaxLag(t *testing.T) {
	h := newHarness(t)
	if h.store.DB.Dialector.Name() != "postgres" {
		t.Skip("PostgreSQL only: SQLite has one writer at a time, the horizon never waits for one")
	}
	const maxLag = 1500 * time.Millisecond
	cfg, _ := config.Load(func(string) string { return "" })
	m := metrics.New()
	h.srv = api.New(api.Deps{Config: cfg, Store: h.store, Metrics: m, Streams: api.StreamOptions{Settle: 50 * time.Millisecond,
		Poll: 50 * time.Millisecond, CredentialCheck: 100 * time.Millisecond, MaxLag: maxLag}})
	base := h.listen(t)
	_, events := sseStream(t, base, "/v1/stream", h.tenants[0].liveKey)
	time.Sleep(100 * time.Millisecond) // the stream is open

	idle := h.store.DB.Begin()
	if idle.Error != nil {
		t.Fatal(idle.Error)
	}
	defer idle.Rollback()
	if err := idle.Exec("SELECT txid_current()").Error; err != nil { // a transaction id, as a write gets
		t.Fatal(err)
	}
	began := time.Now()
	newer := h.recordEvents(t, 0, models.EnvLive, "service.provisioned", "svc_newer", 1, 0)
	if ev := nextEvents(t, events, 1)[0]; ev.id != newer[0] {
		t.Fatalf("event %+v, want %s", ev, newer[0])
	}
	if took := time.Since(began); took < maxLag-300*time.Millisecond {
		t.Fatalf("the event came %s after the idle transaction began: the stream did not wait for it", took)
	}
	fams, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	capped := 0.0
	for _, f := range fams {
		if f.GetName() == "platform_stream_horizon_capped_total" {
			capped = f.GetMetric()[0].GetCounter().GetValue()
		}
	}
	if capped < 1 {
		t.Fatalf("capped reads counted: %v", capped)
	}
}
