//go:build faults

// Package faults holds the fault tests (docs/reliability.md): the built
// platform binary runs as real processes against real PostgreSQL,
// redis-server and Temporal dev server processes private to each test,
// which the tests kill, stop and start again while traffic flows, and then
// check that no promise of the design was broken. They run with
// `make test-faults` (build tag faults), on SQLite (the tests that apply)
// and on PostgreSQL (TEST_DATABASE_URL set, as scripts/with-postgres.sh
// does; each test still starts its own PostgreSQL server so that it may
// restart it).
//
// Every test starts servers and processes of its own on ports of its own,
// so the tests run in parallel (t.Parallel, at most go test's -parallel at
// a time; make test-faults allows 4): most of their time is an outage or a
// recovery waited out in real time, which overlaps the others' work.
package faults

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"gorm.io/gorm"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/identity"
	"github.com/telcoplatform/platform/models/seed"
	"github.com/telcoplatform/platform/temporalclient"
	"github.com/telcoplatform/platform/testenv"
)

// secretsKey is the SECRETS_KEY of every process.
var secretsKey = strings.Repeat("5a", 32)

// sandboxOrder is a provisioning order any number of which the sandbox
// accepts at the same location.
var sandboxOrder = map[string]any{
	"service_template": "internet-dedicated-1g", "location_id": "loc_sandbox_all",
	"customizations": map[string]any{"bandwidth": "100mbps"},
}

// platformBinary builds cmd/platform once for the whole package.
var platformBinary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "faults-bin-")
	if err != nil {
		return "", err
	}
	exe := filepath.Join(dir, "platform")
	out, err := exec.Command("go", "build", "-o", exe, "github.com/telcoplatform/platform/cmd/platform").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("build the platform: %v\n%s", err, out)
	}
	return exe, nil
})

// TestMain removes the built binary after the tests.
func TestMain(m *testing.M) {
	code := m.Run()
	if exe, err := platformBinary(); err == nil {
		_ = os.RemoveAll(filepath.Dir(exe))
	}
	os.Exit(code)
}

// stackOptions shape a stack.
type stackOptions struct {
	apis, workers int           // processes of each (default 1)
	stepDelay     time.Duration // SIMULATOR_STEP_DELAY (default 20ms)
	postgresOnly  string        // when set, the test skips on SQLite with this reason
	restartable   bool          // the Temporal server keeps its state in a file, to be restarted
}

// stack is the platform as deployed: `platform serve` and `platform
// worker` processes of the built binary on a database, a redis-server and
// a Temporal dev server, all private to the test, plus the test's own
// store and Temporal client on the same servers.
type stack struct {
	t            *testing.T
	dir, exe     string
	pg           *daemon // nil on SQLite
	redis        *daemon
	temporal     *daemon
	dbURL        string
	temporalAddr string
	env          []string
	store        *models.Store
	tc           client.Client
	apis         []*testenv.Process
	bases        []string // the APIs' base URLs
	metrics      []string // the APIs' /metrics URLs
	workers      []*testenv.Process
	org          string // the demo tenant
	key          string // its sandbox key, every permission
	http         *http.Client
}

// startStack starts the servers, migrates and seeds the database with the
// binary, and starts the platform's processes, each ready.
func startStack(t *testing.T, o stackOptions) *stack {
	t.Helper()
	if o.postgresOnly != "" && !testenv.IsPostgres() {
		t.Skipf("PostgreSQL only (run under scripts/with-postgres.sh): %s", o.postgresOnly)
	}
	if o.apis == 0 {
		o.apis = 1
	}
	if o.workers == 0 {
		o.workers = 1
	}
	if o.stepDelay == 0 {
		o.stepDelay = 20 * time.Millisecond
	}
	exe, err := platformBinary()
	if err != nil {
		t.Fatal(err)
	}
	s := &stack{t: t, dir: t.TempDir(), exe: exe, http: &http.Client{Timeout: 30 * time.Second}}
	if testenv.IsPostgres() {
		s.pg, s.dbURL = startPostgres(t)
	} else {
		s.dbURL = "sqlite:" + filepath.Join(s.dir, "platform.db")
	}
	var redisURL string
	s.redis, redisURL = startRedis(t)
	s.temporal, s.temporalAddr = startTemporal(t, o.restartable)
	s.env = []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + s.dir, "TMPDIR=" + s.dir,
		"DATABASE_URL=" + s.dbURL, "REDIS_URL=" + redisURL, "SECRETS_KEY=" + secretsKey,
		"BLOB_URL=file:" + filepath.Join(s.dir, "blobs"), "TEMPORAL_ADDRESS=" + s.temporalAddr,
		"TEMPORAL_TASK_QUEUE=faults", "SIMULATOR_STEP_DELAY=" + o.stepDelay.String(),
		"SHUTDOWN_TIMEOUT=10s", "WEBHOOK_ALLOW_PRIVATE=true", "LOG_LEVEL=info",
		"INSTANCES=" + strconv.Itoa(max(o.apis, o.workers)),
	}
	seedCmd := testenv.NewProcess(t, "seed", exe, "seed", s.dir, "", s.env) // migrates, then seeds
	seedCmd.Start()
	if code := seedCmd.Wait(2 * time.Minute); code != 0 {
		t.Fatalf("platform seed exited with status %d", code)
	}
	s.openStore()
	s.setUpTenant()
	tc, err := temporalclient.Dial(context.Background(), temporalclient.Options{Address: s.temporalAddr, Namespace: "default"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tc.Close)
	s.tc = tc

	for i := range o.workers {
		addr := "127.0.0.1:" + strconv.Itoa(testenv.FreePort(t))
		s.workers = append(s.workers, testenv.NewProcess(t, fmt.Sprintf("worker-%d", i+1), exe, "worker", s.dir,
			"http://"+addr+"/readyz", append(s.env, "WORKER_HTTP_ADDR="+addr)))
	}
	for i := range o.apis {
		addr := "127.0.0.1:" + strconv.Itoa(testenv.FreePort(t))
		metrics := "127.0.0.1:" + strconv.Itoa(testenv.FreePort(t))
		base := "http://" + addr
		s.bases, s.metrics = append(s.bases, base), append(s.metrics, "http://"+metrics+"/metrics")
		s.apis = append(s.apis, testenv.NewProcess(t, fmt.Sprintf("api-%d", i+1), exe, "serve", s.dir, base+"/readyz",
			append(s.env, "HTTP_ADDR="+addr, "PUBLIC_BASE_URL="+base, "METRICS_ADDR="+metrics)))
	}
	all := append(append([]*testenv.Process{}, s.workers...), s.apis...)
	for _, p := range all {
		p.Start()
	}
	for _, p := range all {
		p.WaitReady(time.Minute)
	}
	return s
}

// openStore opens the test's own store on the stack's database.
func (s *stack) openStore() {
	db, err := models.Open(context.Background(), s.dbURL, nil)
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(func() { _ = models.Close(db) })
	key, _ := hex.DecodeString(secretsKey)
	sealer, err := models.NewSealer(key)
	if err != nil {
		s.t.Fatal(err)
	}
	s.store = models.NewStore(db, sealer)
}

// setUpTenant puts the demo tenant on a Custom plan whose limits the
// tests do not reach and issues its sandbox key.
func (s *stack) setUpTenant() {
	ctx := context.Background()
	demo, err := seed.NewStore(s.store).DemoOrganization(ctx)
	if err != nil {
		s.t.Fatal(err)
	}
	s.org = demo.ID
	if err := s.store.DB.Model(&models.Organization{}).Where("id = ?", demo.ID).Updates(map[string]any{
		"plan": models.PlanCustom, "custom_hourly": 10_000_000, "custom_burst": 1_000_000, "custom_concurrent": 1000,
	}).Error; err != nil {
		s.t.Fatal(err)
	}
	s.key = s.newKey(identity.APIKeyInput{Name: "faults", RequestsPerMinute: 100_000, BurstLimit: 100_000})
}

// newKey issues a sandbox key of the demo tenant with every permission.
func (s *stack) newKey(in identity.APIKeyInput) string {
	ctx := context.Background()
	provider, err := identity.NewStore(s.store).EnsureProviderOrganization(ctx)
	if err != nil {
		s.t.Fatal(err)
	}
	admin := &models.Principal{ID: "ak_bootstrap", OrganizationID: provider.ID, Environment: models.EnvLive, Role: models.RoleAdmin, Permissions: []string{"*"}}
	in.Permissions, in.OrganizationID, in.Environment = []string{"*"}, s.org, models.EnvTest
	issued, err := identity.NewStore(s.store).CreateAPIKey(ctx, admin, in)
	if err != nil {
		s.t.Fatal(err)
	}
	return issued.Secret
}

// db is the test's database handle scoped to the demo tenant's sandbox.
func (s *stack) db() *gorm.DB {
	return models.Scoped(context.Background(), s.store.DB, models.TenantScope(s.org, models.EnvTest))
}

// answer is one HTTP answer.
type answer struct {
	status int
	body   []byte
	header http.Header
}

// errorCode returns the error code of an error answer.
func (a answer) errorCode() string {
	var e struct {
		Error struct{ Code string } `json:"error"`
	}
	_ = json.Unmarshal(a.body, &e)
	return e.Error.Code
}

// send sends one request with the tenant's key to base.
func (s *stack) send(base, method, path string, body any, headers map[string]string) (answer, error) {
	return s.sendKey(s.key, base, method, path, body, headers)
}

// keyPool issues n more keys of the tenant: the provisioning and billing
// endpoints have their own hourly limits per credential (50 and 100
// requests), which a test sending more spreads over several keys.
func (s *stack) keyPool(n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = s.newKey(identity.APIKeyInput{Name: fmt.Sprintf("pool-%d", i), RequestsPerMinute: 100_000, BurstLimit: 100_000})
	}
	return keys
}

// sendKey sends one request with key to base.
func (s *stack) sendKey(key, base, method, path string, body any, headers map[string]string) (answer, error) {
	var r io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return answer{}, err
		}
		r = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, base+path, r)
	if err != nil {
		return answer{}, err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, err := s.http.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	return answer{status: res.StatusCode, body: raw, header: res.Header}, err
}

// do sends one request to the first API, fails the test on a transport
// error or another status than want, and decodes the answer into out.
func (s *stack) do(method, path string, body any, headers map[string]string, want int, out any) answer {
	s.t.Helper()
	a, err := s.send(s.bases[0], method, path, body, headers)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, path, err)
	}
	if a.status != want {
		s.t.Fatalf("%s %s: %d %s (want %d)", method, path, a.status, a.body, want)
	}
	if out != nil {
		if err := json.Unmarshal(a.body, out); err != nil {
			s.t.Fatalf("%s %s: %v: %s", method, path, err, a.body)
		}
	}
	return a
}

// accepted is the answer of an operation's start.
type accepted struct {
	RequestID string `json:"request_id"`
	ServiceID string `json:"service_id"`
}

// terminalStatuses are the operations' final statuses.
var terminalStatuses = []string{"completed", "partial", "failed", "rolled_back", "cancelled"}

// waitTerminal waits until every operation of ids has a terminal status
// in the database, failing the test after timeout; it returns the
// statuses.
func (s *stack) waitTerminal(ids []string, timeout time.Duration) map[string]string {
	s.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		var rows []struct{ ID, Status string }
		if err := s.db().Table("operations").Select("id, status").Where("id IN ?", ids).Scan(&rows).Error; err != nil {
			s.t.Fatal(err)
		}
		out := map[string]string{}
		pending := 0
		for _, r := range rows {
			out[r.ID] = r.Status
			if !contains(terminalStatuses, r.Status) {
				pending++
			}
		}
		pending += len(ids) - len(rows)
		if pending == 0 {
			return out
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("%d of %d operations not terminal after %s", pending, len(ids), timeout)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// figure logs one figure of the run (docs/reliability.md quotes them from
// the verbose output: grep "figure:").
func (s *stack) figure(name string, value any) {
	s.t.Helper()
	db := "sqlite"
	if s.pg != nil {
		db = "postgres"
	}
	s.t.Logf("figure: %s %s=%v", db, name, value)
}

// retryCall sends one request as a well-behaved client does: a connection
// error or the documented 503 DEPENDENCY_UNAVAILABLE is retried after a
// pause (with the same Idempotency-Key, so nothing is done twice) for up
// to a minute. It returns the answer, how many times it retried, and a
// problem when the answer is outside the contract (another 5xx) or none
// came.
func (s *stack) retryCall(key, base, method, path string, body any, idem string) (answer, int, string) {
	var headers map[string]string
	if idem != "" {
		headers = map[string]string{"Idempotency-Key": idem}
	}
	deadline := time.Now().Add(time.Minute)
	for retries := 0; ; retries++ {
		a, err := s.sendKey(key, base, method, path, body, headers)
		switch {
		case err == nil && a.status == http.StatusServiceUnavailable && a.errorCode() == "DEPENDENCY_UNAVAILABLE" && a.header.Get("Retry-After") != "":
		case err == nil && a.status >= 500:
			return a, retries, fmt.Sprintf("%s %s: %d %s", method, path, a.status, a.body)
		case err == nil:
			return a, retries, ""
		}
		if time.Now().After(deadline) {
			return a, retries, fmt.Sprintf("%s %s: no answer within a minute: %d %v", method, path, a.status, err)
		}
		time.Sleep(300 * time.Millisecond)
	}
}
