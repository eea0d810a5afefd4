package metrics_test

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"text/template"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/promql/parser"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"go.yaml.in/yaml/v3"

	"github.com/telcoplatform/platform/metrics"
	"github.com/telcoplatform/platform/testenv"
)

// The files under test, relative to this package's folder.
const (
	dashboardFile = "../deploy/grafana/platform-dashboard.json"
	alertsFile    = "../deploy/prometheus/alerts.yml"
	runbookFile   = "../docs/operations.md"
)

// runbookBase starts every alert's runbook_url; the anchor after it must
// be a heading of docs/operations.md.
const runbookBase = "https://github.com/telcoplatform/platform/blob/main/docs/operations.md#"

// TestDashboardAndAlerts: every PromQL expression of the Grafana dashboard
// and of the Prometheus alerts parses, and every metric it selects is one
// a platform process exports (gathered from a registry on which every
// family has a sample, the Temporal SDK's through a real worker); every
// alert has a for, a severity, a summary, a description and a runbook_url
// whose anchor is a heading of docs/operations.md.
func TestDashboardAndAlerts(t *testing.T) {
	exported := exportedNames(t)
	t.Run("dashboard", func(t *testing.T) { checkDashboard(t, exported) })
	t.Run("alerts", func(t *testing.T) { checkAlerts(t, exported) })
}

// exportedNames returns the sample names a platform process exposes: the
// family names, with _bucket, _sum and _count of histograms and _sum and
// _count of summaries, and Prometheus's own up.
func exportedNames(t *testing.T) map[string]bool {
	t.Helper()
	m := metrics.New()
	m.ObserveHTTP("/v1/services/:service_id", "GET", 503, 30*time.Millisecond)
	m.APIError("INTERNAL_ERROR")
	m.RateLimitDecision("hourly", true)
	m.RateLimitDecision("burst", false)
	m.RegisterFailOpen(func() float64 { return 0 })
	m.OperationStatusChanged("provisioning", "pending", "in_progress")
	m.OperationStatusChanged("provisioning", "in_progress", "failed")
	m.WebhookAttempt(false, 1)
	m.WebhookAttempt(true, 2)
	m.SLABreach("response")
	m.SLAEscalation("response", "notify_assignee")
	m.RegisterOutboxLag(func(context.Context) (time.Time, bool, error) { return time.Now().Add(-time.Second), true, nil }, nil)
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	m.RegisterDB(db)
	runTemporalProbe(t, m)

	families, err := m.Registry.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	names := map[string]bool{"up": true}
	for _, f := range families {
		n := f.GetName()
		names[n] = true
		switch f.GetType() {
		case dto.MetricType_HISTOGRAM, dto.MetricType_GAUGE_HISTOGRAM:
			names[n+"_bucket"], names[n+"_sum"], names[n+"_count"] = true, true, true
		case dto.MetricType_SUMMARY:
			names[n+"_sum"], names[n+"_count"] = true, true
		}
	}
	return names
}

// runTemporalProbe runs a worker with m's Temporal handler on a dev server
// and, through it, one workflow whose activity succeeds and one whose
// activity fails, plus a request that fails, so that the SDK records its
// schedule-to-start latencies, slots, pollers, requests and failures.
func runTemporalProbe(t *testing.T, m *metrics.Metrics) {
	t.Helper()
	addr := testenv.TemporalAddress(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tc, err := client.DialContext(ctx, client.Options{HostPort: addr, Namespace: "default", MetricsHandler: m.TemporalHandler()})
	if err != nil {
		t.Fatalf("dial Temporal: %v", err)
	}
	defer tc.Close()
	const queue = "metrics-probe"
	w := sdkworker.New(tc, queue, sdkworker.Options{})
	w.RegisterWorkflowWithOptions(probeWorkflow, workflow.RegisterOptions{Name: "MetricsProbe"})
	w.RegisterActivityWithOptions(probeActivity, activity.RegisterOptions{Name: "MetricsProbeStep"})
	if err := w.Start(); err != nil {
		t.Fatalf("start worker: %v", err)
	}
	defer w.Stop()
	for i, fail := range []bool{false, true} {
		run, err := tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: fmt.Sprintf("metrics-probe-%d", i), TaskQueue: queue}, "MetricsProbe", fail)
		if err != nil {
			t.Fatalf("start probe workflow: %v", err)
		}
		if err := run.Get(ctx, nil); (err != nil) != fail {
			t.Fatalf("probe workflow (fail %v): %v", fail, err)
		}
	}
	if _, err := tc.DescribeWorkflowExecution(ctx, "metrics-probe-none", ""); err == nil {
		t.Fatalf("describing a workflow that does not exist succeeded")
	}
}

// probeWorkflow runs the probe activity once, without retries.
func probeWorkflow(ctx workflow.Context, fail bool) error {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 10 * time.Second,
		RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 1}})
	return workflow.ExecuteActivity(ctx, "MetricsProbeStep", fail).Get(ctx, nil)
}

// probeActivity fails when asked to.
func probeActivity(_ context.Context, fail bool) error {
	if fail {
		return temporal.NewNonRetryableApplicationError("probe failure", "Probe", nil)
	}
	return nil
}

// grafanaVar matches a Grafana variable reference: $name, ${name} or
// ${name:format}; grafanaInterval the interval variables, which stand where
// PromQL wants a duration.
var (
	grafanaInterval = regexp.MustCompile(`\$__(rate_interval|interval|range)\b|\$\{__(rate_interval|interval|range)\}`)
	grafanaVar      = regexp.MustCompile(`\$\{[A-Za-z_][A-Za-z0-9_]*(:[A-Za-z]+)?\}|\$[A-Za-z_][A-Za-z0-9_]*`)
)

// checkPromQL parses expr (Grafana variables replaced by values of their
// kind) and reports every metric it selects that the platform does not
// export. It returns the parsed expression (nil on a parse error).
func checkPromQL(t *testing.T, where, expr string, exported map[string]bool) parser.Expr {
	t.Helper()
	src := grafanaInterval.ReplaceAllString(expr, "5m")
	src = grafanaVar.ReplaceAllString(src, "x")
	e, err := parser.ParseExpr(src)
	if err != nil {
		t.Errorf("%s: %q does not parse: %v", where, expr, err)
		return nil
	}
	selectors := 0
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		vs, ok := n.(*parser.VectorSelector)
		if !ok {
			return nil
		}
		selectors++
		name := vs.Name
		if name == "" {
			for _, lm := range vs.LabelMatchers {
				if lm.Name == model.MetricNameLabel {
					name = lm.Value
				}
			}
		}
		if !exported[name] {
			t.Errorf("%s: %q selects %q, which no platform process exports", where, expr, name)
		}
		return nil
	})
	if selectors == 0 {
		t.Errorf("%s: %q selects no metric", where, expr)
	}
	return e
}

// dashboard is the part of Grafana's dashboard model the test reads.
type dashboard struct {
	Title      string  `json:"title"`
	UID        string  `json:"uid"`
	Panels     []panel `json:"panels"`
	Templating struct {
		List []struct {
			Name       string          `json:"name"`
			Type       string          `json:"type"`
			Query      json.RawMessage `json:"query"`
			Datasource json.RawMessage `json:"datasource"`
		} `json:"list"`
	} `json:"templating"`
}

type panel struct {
	ID         int             `json:"id"`
	Type       string          `json:"type"`
	Title      string          `json:"title"`
	Datasource json.RawMessage `json:"datasource"`
	Targets    []struct {
		Expr  string `json:"expr"`
		RefID string `json:"refId"`
	} `json:"targets"`
	Panels []panel `json:"panels"`
}

// labelValues matches the metric of a label_values(metric, label) or
// label_values(metric{...}, label) variable query.
var labelValues = regexp.MustCompile(`^label_values\(\s*([A-Za-z_:][A-Za-z0-9_:]*)`)

func checkDashboard(t *testing.T, exported map[string]bool) {
	raw, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("dashboard JSON: %v", err)
	}
	if d.Title == "" || d.UID == "" {
		t.Errorf("dashboard has no title or uid")
	}
	vars := map[string]bool{}
	for _, v := range d.Templating.List {
		vars[v.Name] = true
		if v.Type != "query" {
			continue
		}
		var q string
		if err := json.Unmarshal(v.Query, &q); err != nil {
			var obj struct {
				Query string `json:"query"`
			}
			if err := json.Unmarshal(v.Query, &obj); err != nil {
				t.Errorf("variable %s: query is neither a string nor an object", v.Name)
				continue
			}
			q = obj.Query
		}
		mm := labelValues.FindStringSubmatch(q)
		if mm == nil {
			t.Errorf("variable %s: query %q is not label_values(metric, label)", v.Name, q)
			continue
		}
		if !exported[mm[1]] {
			t.Errorf("variable %s: %q reads %q, which no platform process exports", v.Name, q, mm[1])
		}
	}
	if !vars["datasource"] {
		t.Errorf("dashboard has no datasource variable")
	}

	var rows []string
	ids := map[int]bool{}
	exprs := 0
	var walk func(ps []panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			if ids[p.ID] {
				t.Errorf("panel id %d used twice", p.ID)
			}
			ids[p.ID] = true
			if p.Type == "row" {
				rows = append(rows, p.Title)
				walk(p.Panels)
				continue
			}
			if p.Title == "" || len(p.Targets) == 0 {
				t.Errorf("panel %d (%q) has no title or no query", p.ID, p.Title)
			}
			if !strings.Contains(string(p.Datasource), "${datasource}") {
				t.Errorf("panel %q does not use the datasource variable: %s", p.Title, p.Datasource)
			}
			for _, tg := range p.Targets {
				exprs++
				if e := checkPromQL(t, "panel "+p.Title+" "+tg.RefID, tg.Expr, exported); e != nil {
					for _, ref := range grafanaVar.FindAllString(tg.Expr, -1) {
						name := strings.Trim(strings.SplitN(ref, ":", 2)[0], "${}")
						if !vars[name] && !strings.HasPrefix(name, "__") { // $__rate_interval and the like are Grafana's
							t.Errorf("panel %q uses %s, which is no dashboard variable", p.Title, ref)
						}
					}
				}
			}
		}
	}
	walk(d.Panels)
	for _, want := range []string{"API", "Operations", "Webhooks", "Support", "Outbox", "Database", "Temporal"} {
		if !slices.ContainsFunc(rows, func(r string) bool { return strings.HasPrefix(r, want) }) {
			t.Errorf("dashboard has no %s row (rows: %v)", want, rows)
		}
	}
	if exprs < 20 {
		t.Errorf("dashboard has only %d queries", exprs)
	}
}

// ruleFile is a Prometheus rule file (the fields of rulefmt the test
// reads; unknown fields are an error, as for Prometheus).
type ruleFile struct {
	Groups []struct {
		Name     string `yaml:"name"`
		Interval string `yaml:"interval"`
		Rules    []struct {
			Alert         string            `yaml:"alert"`
			Record        string            `yaml:"record"`
			Expr          string            `yaml:"expr"`
			For           string            `yaml:"for"`
			KeepFiringFor string            `yaml:"keep_firing_for"`
			Labels        map[string]string `yaml:"labels"`
			Annotations   map[string]string `yaml:"annotations"`
		} `yaml:"rules"`
	} `yaml:"groups"`
}

// alertTemplateFuncs are the template functions Prometheus offers alert
// annotations that the rule file may use (the parse needs them declared).
var alertTemplateFuncs = template.FuncMap{
	"humanize": fmt.Sprint, "humanize1024": fmt.Sprint, "humanizeDuration": fmt.Sprint,
	"humanizePercentage": fmt.Sprint, "humanizeTimestamp": fmt.Sprint, "printf": fmt.Sprintf,
	"toUpper": strings.ToUpper, "toLower": strings.ToLower, "title": fmt.Sprint,
}

func checkAlerts(t *testing.T, exported map[string]bool) {
	raw, err := os.ReadFile(alertsFile)
	if err != nil {
		t.Fatal(err)
	}
	var rf ruleFile
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(&rf); err != nil {
		t.Fatalf("alerts YAML: %v", err)
	}
	anchors := headingAnchors(t, runbookFile)
	seen := map[string]bool{}
	var names []string
	for _, g := range rf.Groups {
		if g.Name == "" || len(g.Rules) == 0 {
			t.Errorf("group %q has no name or no rules", g.Name)
		}
		for _, r := range g.Rules {
			where := "alert " + r.Alert
			if r.Alert == "" {
				t.Errorf("group %s: a rule that is not an alert (record %q)", g.Name, r.Record)
				continue
			}
			if seen[r.Alert] {
				t.Errorf("alert %s defined twice", r.Alert)
			}
			seen[r.Alert] = true
			names = append(names, r.Alert)
			if e := checkPromQL(t, where, r.Expr, exported); e != nil && e.Type() != parser.ValueTypeVector {
				t.Errorf("%s: expression is a %s, not a vector", where, e.Type())
			}
			if d, err := model.ParseDuration(r.For); err != nil || d <= 0 {
				t.Errorf("%s: for %q is not a positive duration", where, r.For)
			}
			if s := r.Labels["severity"]; s != "critical" && s != "warning" {
				t.Errorf("%s: severity %q, want critical or warning", where, s)
			}
			for _, a := range []string{"summary", "description", "runbook_url"} {
				if strings.TrimSpace(r.Annotations[a]) == "" {
					t.Errorf("%s: no %s annotation", where, a)
				}
			}
			for k, v := range r.Annotations {
				if _, err := template.New(k).Funcs(alertTemplateFuncs).Parse("{{$labels := .Labels}}{{$value := .Value}}" + v); err != nil {
					t.Errorf("%s: annotation %s is not a valid template: %v", where, k, err)
				}
			}
			anchor, ok := strings.CutPrefix(r.Annotations["runbook_url"], runbookBase)
			if !ok {
				t.Errorf("%s: runbook_url %q does not start with %s", where, r.Annotations["runbook_url"], runbookBase)
			} else if !anchors[anchor] {
				t.Errorf("%s: runbook_url anchor #%s is no heading of %s", where, anchor, filepath.Base(runbookFile))
			}
		}
	}
	// The alerts the operations guide promises.
	for _, want := range []string{"PlatformAPIHighErrorRatio", "PlatformOutboxLagHigh", "PlatformWebhookFailureRatioHigh",
		"PlatformSLABreachRateHigh", "PlatformTemporalWorkflowTaskScheduleToStartHigh", "PlatformTemporalActivityScheduleToStartHigh"} {
		if !seen[want] {
			t.Errorf("no alert %s (have %v)", want, names)
		}
	}
}

// headingAnchors returns the anchors GitHub gives the headings of a
// Markdown file (fenced code blocks skipped; a repeated heading gets -1,
// -2, ...).
func headingAnchors(t *testing.T, path string) map[string]bool {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	anchors := map[string]bool{}
	counts := map[string]int{}
	fenced := false
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<16), 1<<22)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced || !strings.HasPrefix(line, "#") {
			continue
		}
		text := strings.TrimSpace(strings.TrimLeft(line, "#"))
		a := slug(text)
		if n := counts[a]; n > 0 {
			anchors[fmt.Sprintf("%s-%d", a, n)] = true
		} else {
			anchors[a] = true
		}
		counts[a]++
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(anchors) == 0 {
		t.Fatal(errors.New("no headings in " + path))
	}
	return anchors
}

// slug is GitHub's heading anchor: lower case, punctuation other than
// hyphens and underscores dropped, spaces made hyphens.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9'):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// TestSlug: the anchors the runbook links rely on are GitHub's.
func TestSlug(t *testing.T) {
	for in, want := range map[string]string{
		"Rotating the secrets key":                         "rotating-the-secrets-key",
		"Finding a tenant's operations in the Temporal UI": "finding-a-tenants-operations-in-the-temporal-ui",
		"`PlatformAPIHighErrorRatio`":                      "platformapihigherrorratio",
		"Backups and restore":                              "backups-and-restore",
	} {
		if got := slug(in); got != want {
			t.Errorf("slug(%q) = %q, want %q", in, got, want)
		}
	}
}
