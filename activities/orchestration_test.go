package activities_test

import (
	"strings"
	"testing"

	"go.temporal.io/sdk/testsuite"

	"github.com/telcoplatform/platform/activities"
	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/automation"
	"github.com/telcoplatform/platform/simulator"
	"github.com/telcoplatform/platform/workflows"
)

// An orchestration's steps act with the permissions its creator held, never
// more: a step whose action needs a permission the creator lacked fails
// (before, every step ran with "*").
func TestOrchestrationStepsActWithTheCreatorsPermissions(t *testing.T) {
	f := newFixture(t, nil)
	orch := activities.NewOrchestration(f.store, simulator.New(f.store, simulator.Options{}), nil, nil)
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivity(orch)
	notify := func(id string, perms []string) error {
		in := workflows.OrchestrationStepInput{
			Run:        workflows.OrchestrationRef{RequestID: id, OrganizationID: f.org, Environment: models.EnvLive, DefinitionID: id, CreatedBy: "ak_creator", Permissions: perms},
			Step:       automation.OrchestrationStep{Order: 1, Action: automation.ActionNotify},
			Parameters: map[string]any{"event": "service.modified", "message": "hello"},
		}
		_, err := env.ExecuteActivity(orch.Notify, in)
		return err
	}
	for _, tc := range []struct {
		name    string
		perms   []string
		refused bool
	}{
		{"creator with services:write", []string{"services:read", "services:write"}, false},
		{"creator with every permission", []string{"*"}, false},
		{"creator with read only", []string{"services:read"}, true},
		{"creator with no permission", []string{}, true},
		{"run recorded before permissions were (services:read and services:write)", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := notify(models.NewID(models.PrefixWorkflow), tc.perms)
			if tc.refused != (err != nil) {
				t.Fatalf("refused=%v, err=%v", tc.refused, err)
			}
			if tc.refused && !strings.Contains(err.Error(), "services:write") {
				t.Fatalf("error %v does not name the permission", err)
			}
		})
	}
}
