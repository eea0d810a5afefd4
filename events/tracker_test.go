package events_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/mocks"
	"gorm.io/gorm"

	"github.com/telcoplatform/platform/events"
	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/eventlog"
	"github.com/telcoplatform/platform/models/support"
	"github.com/telcoplatform/platform/workflows"
)

// TestCheckTrackerURL: the chat URL rules under the name tracker_url, and
// no query nor fragment (IP literals only: no DNS).
func TestCheckTrackerURL(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		url          string
		allowPrivate bool
		ok           bool
	}{
		{"https://93.184.216.34", false, true},
		{"https://93.184.216.34/jira/", false, true},
		{"http://93.184.216.34", false, false},
		{"https://10.1.2.3", false, false},
		{"https://127.0.0.1", false, false},
		{"http://127.0.0.1:8080", true, true},
		{"http://10.1.2.3", true, false},
		{"https://93.184.216.34?a=1", false, false},
		{"https://93.184.216.34#x", false, false},
		{"", false, false},
	} {
		err := events.NewSubscriptions(tc.allowPrivate, nil).CheckTrackerURL(ctx, tc.url)
		if tc.ok != (err == nil) {
			t.Errorf("%q (private %v): %v", tc.url, tc.allowPrivate, err)
			continue
		}
		if err != nil {
			e := models.AsError(err)
			fs, _ := e.Details["fields"].([]models.FieldIssue)
			if e.Code != models.CodeValidation || len(fs) == 0 || fs[0].Field != "tracker_url" {
				t.Errorf("%q: %v %+v", tc.url, err, fs)
			}
		}
	}
}

// TestDispatcherSignalsTrackerSyncs: a ticket event signals (with start)
// the sync workflow of each active tracker integration of its tenant, not
// of a paused one; other events signal none.
func TestDispatcherSignalsTrackerSyncs(t *testing.T) {
	f := newDispatchFixture(t)
	ctx := context.Background()
	s := support.NewStore(f.store)
	mk := func(active bool) *support.TrackerIntegration {
		c, err := s.CreateTrackerIntegration(ctx, f.p, support.TrackerSpec{TrackerURL: "https://93.184.216.34", Username: "bot", APIToken: "tok",
			ProjectKey: "OPS", CreateIssues: true, Active: active})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	on, _ := mk(true), mk(false)
	ev := eventlog.NewEvent(support.EventTicketCreated, "tkt_1", map[string]any{"ticket": map[string]any{"id": "tkt_1", "priority": "low"}})
	if err := f.store.Tx(ctx, f.p.OwnScope(), func(tx *gorm.DB) error { return eventlog.RecordEvent(tx, ev) }); err != nil {
		t.Fatal(err)
	}
	f.event(t) // a service event: no signal
	mc := mocks.NewClient(t)
	mc.On("ExecuteWorkflow", mock.Anything, mock.Anything, workflows.WebhookDeliveryWorkflow, mock.Anything).Return(mocks.NewWorkflowRun(t), nil)
	mc.On("SignalWithStartWorkflow", mock.Anything, workflows.TrackerSyncID(on.ID), workflows.TrackerSyncSignal, nil, mock.Anything,
		workflows.TrackerSyncWorkflow, mock.MatchedBy(func(in workflows.TrackerSyncInput) bool {
			return in.IntegrationID == on.ID && in.OrganizationID == f.p.OrganizationID && in.PollInterval == 5*time.Second
		})).Return(mocks.NewWorkflowRun(t), nil).Once()
	d := events.NewDispatcher(f.store, mc, events.Options{TaskQueue: "q", StartGrace: time.Hour, TrackerPollInterval: 5 * time.Second})
	for range 2 { // the second round has nothing left
		if _, err := d.DispatchOnce(ctx); err != nil {
			t.Fatal(err)
		}
	}
}
