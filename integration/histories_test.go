package integration

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/temporalproto"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
)

// recordHistories keeps, when RECORD_HISTORIES names a folder, the longest
// history of each workflow type this test ran, as <type>.json in the
// format of `temporal workflow show --output json`. The replay test
// (worker/TestReplayRecordedHistories) replays every file of
// workflows/testdata/histories, so a change that would break running
// workflows fails there. Record again with
//
//	RECORD_HISTORIES=$PWD/workflows/testdata/histories go test ./integration
//
// after a deliberate, versioned change (workflow.GetVersion).
func recordHistories(t testing.TB, tc client.Client) {
	dir := os.Getenv("RECORD_HISTORIES")
	if dir == "" {
		return
	}
	ctx := context.Background()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Errorf("recording histories: %v", err)
		return
	}
	var token []byte
	for {
		page, err := tc.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: "default", PageSize: 1000, NextPageToken: token})
		if err != nil {
			t.Errorf("recording histories: %v", err)
			return
		}
		for _, ex := range page.Executions {
			hist := &historypb.History{}
			it := tc.GetWorkflowHistory(ctx, ex.Execution.WorkflowId, ex.Execution.RunId, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
			for it.HasNext() {
				ev, err := it.Next()
				if err != nil {
					t.Errorf("recording histories: %v", err)
					return
				}
				hist.Events = append(hist.Events, ev)
			}
			path := filepath.Join(dir, ex.Type.Name+".json")
			if old, err := os.ReadFile(path); err == nil {
				prev := &historypb.History{}
				opts := temporalproto.CustomJSONUnmarshalOptions{DiscardUnknown: true}
				if opts.Unmarshal(old, prev) == nil && len(prev.Events) >= len(hist.Events) {
					continue
				}
			}
			raw, err := temporalproto.CustomJSONMarshalOptions{Indent: "  "}.Marshal(hist)
			if err != nil {
				t.Errorf("recording histories: %v", err)
				return
			}
			if err := os.WriteFile(path, append(raw, '\n'), 0o644); err != nil {
				t.Errorf("recording histories: %v", err)
				return
			}
		}
		if token = page.NextPageToken; len(token) == 0 {
			return
		}
	}
}
