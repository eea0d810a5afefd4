package worker_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"testing"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"

	"github.com/telcoplatform/platform/worker"
	"github.com/telcoplatform/platform/workflows"
)

// recorder lists the activity type names a registration makes, the way
// the SDK forms them for a registered struct: the prefix and the name of
// each exported method.
type recorder struct{ names []string }

func (r *recorder) RegisterActivityWithOptions(a any, options activity.RegisterOptions) {
	t := reflect.TypeOf(a)
	if t.Kind() == reflect.Func {
		r.names = append(r.names, options.Name)
		return
	}
	for i := range t.NumMethod() {
		r.names = append(r.names, options.Name+t.Method(i).Name)
	}
}

// interfaceNames returns the activity type name of every method of the
// workflows' activity interfaces: what the workflows may schedule.
func interfaceNames() []string {
	var out []string
	for _, t := range workflows.ActivityInterfaces() {
		for i := range t.NumMethod() {
			out = append(out, workflows.GroupPrefix(t)+t.Method(i).Name)
		}
	}
	sort.Strings(out)
	return out
}

// TestRegisterActivitiesMatchesTheInterfaces checks that RegisterActivities
// registers exactly the activities the workflows can call: each method of
// each activity interface once, and nothing else (an extra exported method
// on an activities struct would be registered as an activity too).
func TestRegisterActivitiesMatchesTheInterfaces(t *testing.T) {
	var r recorder
	worker.RegisterActivities(&r, worker.Deps{})
	got := slices.Clone(r.names)
	sort.Strings(got)
	if want := interfaceNames(); !slices.Equal(got, want) {
		t.Fatalf("registered activities\n%v\nwant\n%v", got, want)
	}
	if len(got) != len(slices.Compact(slices.Clone(got))) {
		t.Fatalf("an activity is registered twice: %v", got)
	}
}

// TestEveryCalledActivityIsRegistered registers everything on a test
// workflow environment (the SDK's own registry) and checks that each
// activity a workflow can schedule is registered there under the name
// ActivityName gives its method expression.
func TestEveryCalledActivityIsRegistered(t *testing.T) {
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	worker.Register(env, worker.Deps{})
	names := interfaceNames()
	if len(names) < 50 {
		t.Fatalf("only %d activities listed", len(names))
	}
	// Method expressions name the same activities as the listing.
	for _, m := range []any{workflows.ProvisioningActivities.ReserveCapacity, workflows.DecommissionActivities.Record,
		workflows.ServiceChangeActivities.Apply, workflows.OrchestrationActivities.DispatchEvent} {
		if n := workflows.ActivityName(m); !slices.Contains(names, n) {
			t.Errorf("%s is not among the interfaces' activities", n)
		}
	}
	for _, name := range names {
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Errorf("activity %s is not registered: %v", name, p)
				}
			}()
			env.OnActivity(name, mock.Anything, mock.Anything).Return(nil).Maybe()
		}()
	}
}

// TestRecordedActivityNamesAreRegistered checks that every activity type
// scheduled in a recorded history is still registered under that name:
// running workflows keep finding their activities after a deployment.
func TestRecordedActivityNamesAreRegistered(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "workflows", "testdata", "histories", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no recorded histories: %v", err)
	}
	var r recorder
	worker.RegisterActivities(&r, worker.Deps{})
	seen := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var h struct {
			Events []struct {
				Scheduled *struct {
					ActivityType struct{ Name string } `json:"activityType"`
				} `json:"activityTaskScheduledEventAttributes"`
			} `json:"events"`
		}
		if err := json.Unmarshal(b, &h); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, ev := range h.Events {
			if ev.Scheduled == nil {
				continue
			}
			seen++
			if name := ev.Scheduled.ActivityType.Name; !slices.Contains(r.names, name) {
				t.Errorf("%s schedules activity %q, which is not registered", filepath.Base(f), name)
			}
		}
	}
	if seen == 0 {
		t.Fatal("the histories schedule no activity")
	}
}
