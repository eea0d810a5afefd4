package worker_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

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
	if len(files) == 0 {
		t.Fatal("no recorded histories")
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

// workflowRecorder lists the workflow type names a registration makes.
type workflowRecorder struct{ names []string }

func (r *workflowRecorder) RegisterWorkflowWithOptions(_ any, options workflow.RegisterOptions) {
	r.names = append(r.names, options.Name)
}

// TestEveryRegisteredWorkflowHasARecordedHistory checks that each workflow
// type RegisterWorkflows registers has a recorded history,
// workflows/testdata/histories/<name>.json, which
// TestReplayRecordedHistories replays: a new workflow cannot ship without
// one (record it from an integration test that runs it, as
// integration/histories_test.go says). It also checks that no history is
// left of a workflow type no longer registered. A workflow may keep one
// more history per earlier version of its code that running workflows may
// still have, <name>.<version>.json.
func TestEveryRegisteredWorkflowHasARecordedHistory(t *testing.T) {
	var r workflowRecorder
	worker.RegisterWorkflows(&r)
	if len(r.names) < 11 {
		t.Fatalf("only %d workflows registered: %v", len(r.names), r.names)
	}
	dir := filepath.Join("..", "workflows", "testdata", "histories")
	for _, name := range r.names {
		if name == "" {
			t.Errorf("a workflow is registered without a name: %v", r.names)
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, name+".json")); err != nil {
			t.Errorf("workflow %s has no recorded history: %v", name, err)
		}
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		// <name>.json, or <name>.<version>.json for another shape of the
		// same workflow kept behind workflow.GetVersion (WebhookDelivery.v0.json,
		// Bulk.batches.json).
		name, _, _ := strings.Cut(strings.TrimSuffix(filepath.Base(f), ".json"), ".")
		if !slices.Contains(r.names, name) {
			t.Errorf("%s is the history of %s, which is not registered", filepath.Base(f), name)
		}
	}
}
