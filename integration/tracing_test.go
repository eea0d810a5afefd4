package integration

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/telcoplatform/platform/tracing"
)

// TestOneTraceFromRequestToSQL provisions a service with tracing on (the
// spans recorded in memory) and follows its trace: the API's server span
// (whose id the answer's traceparent carries) → the client's
// StartWorkflow → the worker's RunWorkflow (the workflow task) →
// StartActivity → RunActivity → a SQL statement the activity ran, all in
// one trace, each span a descendant of the one before.
func TestOneTraceFromRequestToSQL(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	p := startPlatform(t, platformOptions{keys: demoLiveKey, tracing: tracing.NewWithSpanProcessor(rec, nil)})

	raw, _ := json.Marshal(map[string]any{
		"account_id": p.demo.Account.ID, "service_type": "fiber_dedicated", "bandwidth": "1gbps", "sla": "premium",
		"location": map[string]any{"address": "100 Congress Ave", "city": "Austin", "state": "TX", "zip": "78701"},
	})
	req, _ := http.NewRequest(http.MethodPost, p.base+"/v1/services/connectivity/internet", bytes.NewReader(raw))
	req.Header.Set("Authorization", "Bearer "+p.liveKey)
	req.Header.Set("Content-Type", "application/json")
	res, err := p.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var acc accepted
	if err := json.NewDecoder(res.Body).Decode(&acc); err != nil || res.StatusCode != http.StatusAccepted {
		t.Fatalf("status %d: %v", res.StatusCode, err)
	}
	_ = res.Body.Close()
	parts := strings.Split(res.Header.Get("Traceparent"), "-")
	if len(parts) != 4 {
		t.Fatalf("traceparent %q", res.Header.Get("Traceparent"))
	}
	traceID, serverID := parts[1], parts[2]
	if op := p.poll(acc.StatusURL, p.liveKey, func(op *operation) bool { return terminal(op.Status) }); op.Status != "completed" {
		t.Fatalf("provisioning ended %s", op.Status)
	}

	// The trace's spans by id, once the workflow's span has ended (the
	// workflow returns just after the operation reads completed).
	var byID map[string]tracetest.SpanStub
	find := func(prefix, ancestor string) (tracetest.SpanStub, bool) {
		for _, s := range byID {
			if !strings.HasPrefix(s.Name, prefix) {
				continue
			}
			for id := s.Parent.SpanID().String(); ; {
				if id == ancestor {
					return s, true
				}
				parent, ok := byID[id]
				if !ok {
					break
				}
				id = parent.Parent.SpanID().String()
			}
		}
		return tracetest.SpanStub{}, false
	}
	var chain []tracetest.SpanStub
	deadline := time.Now().Add(30 * time.Second)
	for {
		byID = map[string]tracetest.SpanStub{}
		for _, s := range tracetest.SpanStubsFromReadOnlySpans(rec.Ended()) {
			if s.SpanContext.TraceID().String() == traceID {
				byID[s.SpanContext.SpanID().String()] = s
			}
		}
		chain = chain[:0]
		if server, ok := byID[serverID]; ok {
			chain = append(chain, server)
			for _, prefix := range []string{"StartWorkflow:", "RunWorkflow:", "StartActivity:", "RunActivity:", ""} {
				last := chain[len(chain)-1]
				var next tracetest.SpanStub
				if prefix == "" { // a SQL statement of the activity
					for _, s := range byID {
						if s.InstrumentationScope.Name == "gorm.io/plugin/opentelemetry" {
							if _, under := find(s.Name, last.SpanContext.SpanID().String()); under {
								next, ok = s, true
								break
							}
						}
					}
					if next.Name == "" {
						ok = false
					}
				} else {
					next, ok = find(prefix, last.SpanContext.SpanID().String())
				}
				if !ok {
					break
				}
				chain = append(chain, next)
			}
		}
		if len(chain) == 6 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if len(chain) != 6 {
		var names []string
		for _, s := range byID {
			names = append(names, s.Name+" ("+s.SpanContext.SpanID().String()+" < "+s.Parent.SpanID().String()+")")
		}
		t.Fatalf("the trace %s stops after %d links of 6; its spans: %s", traceID, len(chain), strings.Join(names, ", "))
	}
	server, start, run, startAct, runAct, stmt := chain[0], chain[1], chain[2], chain[3], chain[4], chain[5]
	if server.SpanKind != trace.SpanKindServer || server.Name != "POST /v1/services/connectivity/internet" || server.Parent.IsValid() {
		t.Errorf("server span %q kind %v parent %v", server.Name, server.SpanKind, server.Parent)
	}
	if start.Name != "StartWorkflow:"+strings.TrimPrefix(run.Name, "RunWorkflow:") || run.Parent.SpanID() != start.SpanContext.SpanID() {
		t.Errorf("%s (parent %s) after %s (%s)", run.Name, run.Parent.SpanID(), start.Name, start.SpanContext.SpanID())
	}
	if runAct.Parent.SpanID() != startAct.SpanContext.SpanID() || strings.TrimPrefix(runAct.Name, "RunActivity:") != strings.TrimPrefix(startAct.Name, "StartActivity:") {
		t.Errorf("%s (parent %s) after %s (%s)", runAct.Name, runAct.Parent.SpanID(), startAct.Name, startAct.SpanContext.SpanID())
	}
	var query string
	for _, kv := range stmt.Attributes {
		if kv.Key == "db.query.text" {
			query = kv.Value.AsString()
		}
	}
	if query == "" || strings.Contains(query, acc.ServiceID) || strings.Contains(query, p.demo.Account.ID) {
		t.Errorf("SQL span %q: statement %q (empty, or with its parameters)", stmt.Name, query)
	}
	t.Logf("trace %s: %s → %s → %s → %s → %s → %s", traceID, server.Name, start.Name, run.Name, startAct.Name, runAct.Name, stmt.Name)
}
