package api

import (
	"context"
	"testing"
	"time"

	"github.com/telcoplatform/platform/config"
	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/eventlog"
	"github.com/telcoplatform/platform/testenv"
)

// endSink records how a stream ended.
type endSink struct {
	ended  *models.Error
	reason string
	events int
}

func (k *endSink) event(string, string, []byte) error { k.events++; return nil }
func (k *endSink) heartbeat() error                   { return nil }
func (k *endSink) end(e *models.Error, reason string) { k.ended, k.reason = e, reason }
func (k *endSink) done() <-chan struct{}              { return nil }

// TestStreamCatchUpEndsWithItsContext: a stream whose context ends while
// it reads its backlog (the event log read fails with the cancellation)
// tells its client why, as a live stream does: SERVICE_MAINTENANCE with
// reason "shutdown" at the server's shutdown, the maximum duration's
// message when that passed; never INTERNAL_ERROR.
func TestStreamCatchUpEndsWithItsContext(t *testing.T) {
	cfg, err := config.Load(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	s := New(Deps{Config: cfg, Store: testenv.Store(t)})
	defer s.EndStreams()
	run := func(ctx context.Context) *endSink {
		t.Helper()
		tenant := models.Tenant{OrganizationID: models.NewID(models.PrefixOrganization), Environment: models.EnvLive}
		st := &eventStream{principal: models.Principal{ID: "usr_x", OrganizationID: tenant.OrganizationID, Environment: tenant.Environment},
			after: eventlog.StreamPosition{At: time.Now().Add(-time.Hour)}, lease: &streamLease{}, sub: s.hub.subscribe(s.life, tenant)}
		sink := &endSink{}
		done := make(chan struct{})
		go func() { defer close(done); s.runEventStream(ctx, st, sink) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatal("the stream did not end with its context")
		}
		return sink
	}

	shutdown, stop := context.WithCancelCause(context.Background())
	stop(errShutdown)
	sink := run(shutdown)
	if sink.ended == nil || sink.ended.Code != models.CodeServiceMaintenance || sink.ended.Details["reason"] != "shutdown" || sink.reason != "shutdown" {
		t.Fatalf("a stream ended by the shutdown during its catch-up: %+v %q", sink.ended, sink.reason)
	}

	expired, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	sink = run(expired)
	if sink.ended == nil || sink.ended.Code != models.CodeServiceMaintenance || sink.reason != "max duration" {
		t.Fatalf("a stream past its maximum duration during its catch-up: %+v %q", sink.ended, sink.reason)
	}
}
