package integration

import (
	"bufio"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fasthttp/websocket"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/eventlog"
	"github.com/telcoplatform/platform/models/identity"
	"github.com/telcoplatform/platform/testenv"
	"github.com/telcoplatform/platform/workflows"
)

// streamClient is one real-time stream client (SSE or WebSocket) whose
// received event ids are collected in order.
type streamClient struct {
	mu     sync.Mutex
	ids    []string
	closed chan struct{}
	stop   func()
	// closeErr is how a WebSocket ended (its close frame).
	closeErr error
}

func (s *streamClient) received() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.ids...)
}

func (s *streamClient) add(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ids = append(s.ids, id)
}

// openSSE connects a Server-Sent Events client to base's stream.
func openSSE(t *testing.T, base, query, key, lastID string) *streamClient {
	t.Helper()
	req, _ := http.NewRequest("GET", base+"/v1/stream"+query, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Accept", "text/event-stream")
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK {
		t.Fatalf("SSE stream on %s: %d", base, res.StatusCode)
	}
	c := &streamClient{closed: make(chan struct{}), stop: func() { _ = res.Body.Close() }}
	t.Cleanup(c.stop)
	go func() {
		defer close(c.closed)
		r := bufio.NewReader(res.Body)
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			if id, ok := strings.CutPrefix(strings.TrimSpace(line), "id: "); ok {
				c.add(id)
			}
		}
	}()
	return c
}

// openWS connects a WebSocket client to base's stream.
func openWS(t *testing.T, base, query, key string) *streamClient {
	t.Helper()
	h := http.Header{}
	h.Set("Authorization", "Bearer "+key)
	conn, res, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(base, "http")+"/v1/stream"+query, h)
	if err != nil {
		t.Fatalf("WebSocket stream on %s: %v %v", base, err, res)
	}
	c := &streamClient{closed: make(chan struct{}), stop: func() { _ = conn.Close() }}
	t.Cleanup(c.stop)
	go func() {
		defer close(c.closed)
		for {
			var msg struct{ ID string }
			if err := conn.ReadJSON(&msg); err != nil {
				c.mu.Lock()
				c.closeErr = err
				c.mu.Unlock()
				return
			}
			if msg.ID != "" {
				c.add(msg.ID)
			}
		}
	}()
	return c
}

// waitCount waits until c received at least n events.
func waitCount(t *testing.T, c *streamClient, n int, what string) []string {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		if got := c.received(); len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d of %d events within a minute: %v", what, len(c.received()), n, c.received())
		}
	}
}

// TestRealtimeStreamAcrossInstances runs two `platform serve` processes
// and a worker on one database, Redis and Temporal: a WebSocket client and
// an SSE client, on different instances, receive a provisioning's events
// in order; each disconnects mid-way and resumes on the other instance
// from its last event id, and ends with exactly the event log's events
// (no gap, no duplicate); revoking a key closes its stream on the other
// instance within a couple of seconds.
func TestRealtimeStreamAcrossInstances(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	temporalAddr := testenv.TemporalAddress(t, workflows.DevServerArgs()...)
	redisURL := testenv.RedisURL(t)
	dbURL := testenv.DatabaseURL(t)
	exe := testenv.BuildPlatform(t, dir)
	common := []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "TMPDIR=" + dir,
		"DATABASE_URL=" + dbURL, "REDIS_URL=" + redisURL, "SECRETS_KEY=" + clusterSecretsKey,
		"BLOB_URL=file:" + filepath.Join(dir, "blobs"), "TEMPORAL_ADDRESS=" + temporalAddr, "TEMPORAL_TASK_QUEUE=stream-" + models.RandomString(6),
		"SIMULATOR_STEP_DELAY=100ms", "SHUTDOWN_TIMEOUT=5s", "LOG_LEVEL=info",
	}
	seedCmd := testenv.NewProcess(t, "seed", exe, "seed", dir, "", common)
	seedCmd.Start()
	if code := seedCmd.Wait(2 * time.Minute); code != 0 {
		t.Fatalf("platform seed exited with status %d", code)
	}
	c := &cluster{t: t, http: &http.Client{Timeout: 30 * time.Second}}
	c.store = openClusterStore(t, dbURL)
	c.setUpTenant(ctx)
	waddr := "127.0.0.1:" + strconv.Itoa(testenv.FreePort(t))
	procs := []*testenv.Process{testenv.NewProcess(t, "worker", exe, "worker", dir, "http://"+waddr+"/readyz", append(common, "WORKER_HTTP_ADDR="+waddr))}
	for i, name := range []string{"api-a", "api-b"} {
		addr := "127.0.0.1:" + strconv.Itoa(testenv.FreePort(t))
		c.bases[i] = "http://" + addr
		procs = append(procs, testenv.NewProcess(t, name, exe, "serve", dir, c.bases[i]+"/readyz", append(common, "HTTP_ADDR="+addr, "PUBLIC_BASE_URL="+c.bases[i])))
	}
	for _, p := range procs {
		p.Start()
	}
	for _, p := range procs {
		p.WaitReady(time.Minute)
	}

	const query = "?types=service.*"
	start := time.Now().UTC()
	sse := openSSE(t, c.bases[0], query, c.opsKey, "")
	ws := openWS(t, c.bases[1], query, c.opsKey)
	time.Sleep(300 * time.Millisecond) // both streams are open

	// The first provisioning: both clients see its first event, then go.
	first := c.provision(0, c.opsKey, "stream-"+models.RandomString(10))
	waitCount(t, sse, 1, "SSE on api-a")
	waitCount(t, ws, 1, "WebSocket on api-b")
	sse.stop()
	ws.stop()
	<-sse.closed
	<-ws.closed
	sseGot, wsGot := sse.received(), ws.received()
	c.waitOperation(t, 0, c.opsKey, first.RequestID, 2*time.Minute)
	// Two more while they are away.
	away := []accepted{c.provision(1, c.opsKey, "stream-"+models.RandomString(10)), c.provision(2, c.opsKey, "stream-"+models.RandomString(10))}
	for i, acc := range away {
		c.waitOperation(t, i, c.opsKey, acc.RequestID, 2*time.Minute)
	}
	// Each resumes on the other instance from its last event id.
	sse2 := openSSE(t, c.bases[1], query, c.opsKey, sseGot[len(sseGot)-1])
	ws2 := openWS(t, c.bases[0], query+"&after="+wsGot[len(wsGot)-1], c.opsKey)
	last := c.provision(3, c.opsKey, "stream-"+models.RandomString(10))
	c.waitOperation(t, 3, c.opsKey, last.RequestID, 2*time.Minute)

	// The event log's service events since the streams opened.
	var evs []eventlog.Event
	if err := c.tenantDB().Where("type LIKE ? AND created_at >= ?", "service.%", start).Order("created_at, id").Find(&evs).Error; err != nil {
		t.Fatal(err)
	}
	want := make([]string, len(evs))
	for i := range evs {
		want[i] = evs[i].ID
	}
	if len(want) < 4 {
		t.Fatalf("only %d service events for four provisionings", len(want))
	}
	for _, cl := range []struct {
		name   string
		before []string
		after  *streamClient
	}{{"SSE (api-a, then api-b)", sseGot, sse2}, {"WebSocket (api-b, then api-a)", wsGot, ws2}} {
		waitCount(t, cl.after, len(want)-len(cl.before), cl.name)
		time.Sleep(time.Second) // a duplicate would come by now
		got := append(append([]string(nil), cl.before...), cl.after.received()...)
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("%s received\n%v\nthe event log has\n%v", cl.name, got, want)
		}
	}

	// A revoked key's stream (on api-b) closes when the key is revoked
	// through api-a.
	provider, err := identity.NewStore(c.store).EnsureProviderOrganization(ctx)
	if err != nil {
		t.Fatal(err)
	}
	admin := &models.Principal{ID: "ak_bootstrap", OrganizationID: provider.ID, Environment: models.EnvLive, Role: models.RoleAdmin, Permissions: []string{"*"}}
	issued, err := identity.NewStore(c.store).CreateAPIKey(ctx, admin, identity.APIKeyInput{Name: "revoked", Permissions: []string{"services:read"}, OrganizationID: c.demoOrg, Environment: models.EnvTest})
	if err != nil {
		t.Fatal(err)
	}
	doomed := openWS(t, c.bases[1], "", issued.Secret)
	time.Sleep(300 * time.Millisecond)
	if st, raw := c.do(c.bases[0], "DELETE", "/v1/auth/api-keys/"+issued.Key.ID, c.opsKey, nil, nil, nil); st != http.StatusOK {
		t.Fatalf("revoke: %d %s", st, raw)
	}
	revoked := time.Now()
	select {
	case <-doomed.closed:
	case <-time.After(5 * time.Second):
		t.Fatal("the revoked key's stream is still open after 5 s")
	}
	var ce *websocket.CloseError
	ce, _ = doomed.closeErr.(*websocket.CloseError)
	if ce == nil || ce.Code != websocket.ClosePolicyViolation || !strings.HasPrefix(ce.Text, "INVALID_API_KEY") {
		t.Fatalf("the revoked key's stream ended with %v", doomed.closeErr)
	}
	t.Logf("the revoked key's stream closed %s after the revocation", time.Since(revoked).Round(10*time.Millisecond))
}
