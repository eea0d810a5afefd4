package worker_test

import (
	"os"
	"path/filepath"
	"testing"

	sdkworker "go.temporal.io/sdk/worker"

	"github.com/telcoplatform/platform/worker"
)

// TestReplayRecordedHistories replays the recorded history of every
// workflow type (workflows/testdata/histories, recorded from the
// integration tests against the Temporal dev server) with today's workflow
// code: a change that would make running workflows non-deterministic fails
// here. A deliberate change of a workflow's commands goes behind
// workflow.GetVersion, and the histories are recorded again
// (integration/histories_test.go says how).
func TestReplayRecordedHistories(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "workflows", "testdata", "histories", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	// The long-lived workflows must each have a recorded history.
	for _, name := range []string{"Subscription", "WebhookDelivery", "Bulk", "Orchestration", "Provisioning"} {
		if _, err := os.Stat(filepath.Join("..", "workflows", "testdata", "histories", name+".json")); err != nil {
			t.Errorf("no recorded history of %s: %v", name, err)
		}
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			r := sdkworker.NewWorkflowReplayer()
			worker.RegisterWorkflows(r)
			if err := r.ReplayWorkflowHistoryFromJSONFile(nil, f); err != nil {
				t.Fatalf("replaying %s: %v", f, err)
			}
		})
	}
}
