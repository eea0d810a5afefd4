package api

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"
	"github.com/gofiber/fiber/v2"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/automation"
	"github.com/telcoplatform/platform/models/operations"
	"github.com/telcoplatform/platform/workflows"
)

// OrchestrationStepBody is one step of an orchestration.
type OrchestrationStepBody struct {
	Order      int            `json:"order" required:"true" minimum:"1" example:"1" doc:"Required: a positive integer, unique in the workflow"`
	Action     string         `json:"action" required:"true" enum:"provision_service,modify_service,scale_service,suspend_service,resume_service,run_availability_check,notify,wait" maxLength:"60" example:"provision_service" doc:"Required: provision_service, modify_service, scale_service, suspend_service, resume_service, run_availability_check, notify or wait"`
	Parameters map[string]any `json:"parameters,omitempty" doc:"The action's parameters: each action has its own, with the JSON Schema of the component OrchestrationParameters_<action> (docs/bulk-and-orchestration.md); strings may reference ${steps.<order>.<output>} of a step this one depends on, or ${event....} with an event trigger"`
	DependsOn  []int          `json:"depends_on,omitempty" maxItems:"50" example:"[1]" doc:"Orders of the steps that must complete first"`
}

// OrchestrationBody is the workflow create request.
type OrchestrationBody struct {
	Name    string                  `json:"name" required:"true" minLength:"1" maxLength:"200" example:"Branch roll-out" doc:"Required"`
	Trigger string                  `json:"trigger,omitempty" maxLength:"80" example:"manual" doc:"manual (the default): run now; event:<event name> (e.g. event:service.provisioned): run each time that event occurs in the organization"`
	Steps   []OrchestrationStepBody `json:"steps" required:"true" minItems:"1" maxItems:"50" example:"[{\"order\":1,\"action\":\"wait\",\"parameters\":{\"duration\":\"15m\"}}]" doc:"Required: 1 to 50 steps forming a DAG through depends_on"`
}

// OrchestrationInfo describes an orchestration workflow's definition.
type OrchestrationInfo struct {
	ID        string                  `json:"id" example:"wf_3fK9aZ" doc:"The orchestration's id: its run (manual) or its standing trigger operation (event)"`
	Name      string                  `json:"name"`
	Trigger   string                  `json:"trigger" example:"manual"`
	Active    bool                    `json:"active" doc:"An event trigger that still starts runs"`
	Runs      int                     `json:"runs" doc:"Runs an event trigger has started"`
	Steps     []OrchestrationStepBody `json:"steps"`
	CreatedAt string                  `json:"created_at"`
}

// OrchestrationAcceptedOutput is the 202 answer of POST /services/orchestration/workflows.
type OrchestrationAcceptedOutput struct {
	Status   int
	Location string `header:"Location" doc:"The operation's status_url"`
	Body     struct {
		Envelope
		RequestID  string `json:"request_id" example:"wf_3fK9aZ" doc:"The operation id, also the Temporal workflow id"`
		WorkflowID string `json:"workflow_id" example:"wf_3fK9aZ" doc:"The same id: GET /v1/services/orchestration/workflows/{workflow_id}"`
		Type       string `json:"type" example:"orchestration" doc:"orchestration (a manual run) or orchestration_trigger (an event trigger)"`
		Status     string `json:"status" example:"pending"`
		StatusURL  string `json:"status_url"`
		Name       string `json:"name"`
		Trigger    string `json:"trigger" example:"manual"`
		CreatedAt  string `json:"created_at"`
	}
}

// OrchestrationOutput is an orchestration operation (the operation document)
// with its definition.
type OrchestrationOutput struct {
	Body struct {
		Envelope
		OperationDocument
		Orchestration OrchestrationInfo `json:"orchestration"`
	}
}

type orchestrationPath struct {
	WorkflowID string `path:"workflow_id" maxLength:"64" example:"wf_3fK9aZ"`
}

func orchestrationInfo(def *automation.OrchestrationDefinition) OrchestrationInfo {
	return OrchestrationInfo{ID: def.ID, Name: def.Name, Trigger: def.Trigger, Active: def.Active, Runs: def.Runs,
		CreatedAt: models.Timestamp(def.CreatedAt),
		Steps: mapSlice(def.Steps, func(st *automation.OrchestrationStep) OrchestrationStepBody {
			return OrchestrationStepBody{Order: st.Order, Action: st.Action, Parameters: st.Parameters, DependsOn: st.DependsOn}
		}),
	}
}

// orchestrationStream serves `Accept: text/event-stream` on
// GET /services/orchestration/workflows/{workflow_id} like the operation's
// own stream; other requests pass to the JSON operation registered after it.
func (s *Server) orchestrationStream(c *fiber.Ctx) error {
	return s.serveOperationStream(c, "workflow_id", func(ctx context.Context, p *models.Principal, id string) (*operations.Operation, error) {
		op, _, err := s.automation.GetOrchestration(ctx, p, id)
		return op, err
	})
}

// startOrchestration starts the workflow of a stored orchestration: its run
// (manual) or its trigger (event), on the interactive task queue.
func (s *Server) startOrchestration(ctx context.Context, scope models.Scope, def *automation.OrchestrationDefinition, createdBy string) error {
	ref := workflows.OrchestrationRef{RequestID: def.ID, OrganizationID: scope.OrganizationID, Environment: scope.Environment,
		DefinitionID: def.ID, CreatedBy: createdBy, Permissions: def.CreatorPermissions}
	opType, wf := automation.OpTypeOrchestration, workflows.OrchestrationWorkflow
	var arg any = workflows.OrchestrationInput{Run: ref, Steps: def.Steps}
	if def.EventType != "" {
		opType, wf = automation.OpTypeOrchestrationTrigger, workflows.OrchestrationTriggerWorkflow
		arg = workflows.OrchestrationTriggerInput{Trigger: ref, EventType: def.EventType}
	}
	opts := workflows.StartOptions(s.taskQueues(), workflows.Start{ID: def.ID, Priority: workflows.Interactive,
		OrganizationID: scope.OrganizationID, Environment: scope.Environment, OperationType: string(opType), ResourceID: def.ID,
		Link: s.cfg.PublicBaseURL + "/v1/services/orchestration/workflows/" + def.ID})
	startCtx, cancel := context.WithTimeout(ctx, workflowStartTimeout)
	defer cancel()
	_, err := s.temporal.ExecuteWorkflow(startCtx, opts, wf, arg)
	return err
}

// registerOrchestration registers /services/orchestration/workflows (fixed
// paths: before registerServices), the GET with its Server-Sent Events route first.
func (s *Server) registerOrchestration() {
	tags := []string{"Services: orchestration"}
	for _, prefix := range []string{"/v1", "/api/v1"} {
		s.App.Get(prefix+"/services/orchestration/workflows/:workflow_id", s.orchestrationStream)
	}
	register(s, huma.Operation{OperationID: "create-orchestration-workflow", Method: http.MethodPost, Path: "/services/orchestration/workflows",
		Summary: "Create an orchestration workflow", Tags: tags, DefaultStatus: http.StatusAccepted,
		Description: "Validates the workflow (name, trigger, steps forming a DAG through depends_on: cycles, unknown dependencies, unknown actions " +
			"and bad parameters are 400) and starts it. trigger manual (the default) runs the steps now: the operation (`wf_...`) has one step " +
			"per step (`<order>:<action>`), independent steps run in parallel, a failed step skips the steps depending on it, and the result " +
			"lists which ran, failed and were skipped. trigger event:<name> starts a standing operation (type orchestration_trigger) that runs " +
			"the steps each time that event occurs in the organization; each run is an operation listed in its items; cancelling it " +
			"(POST /v1/operations/{request_id}/cancel) deactivates it. Steps act with the creator's permissions, never more; since steps can provision, " +
			"users are challenged with a second factor. Answers 202 with the operation. See docs/bulk-and-orchestration.md."},
		access{permission: "services:write", mfa: true}, func(ctx context.Context, in *struct{ Body OrchestrationBody }) (*OrchestrationAcceptedOutput, error) {
			p := principal(ctx)
			oin := automation.OrchestrationInput{Name: in.Body.Name, Trigger: in.Body.Trigger}
			for _, st := range in.Body.Steps {
				oin.Steps = append(oin.Steps, automation.OrchestrationStep{Order: st.Order, Action: st.Action, Parameters: st.Parameters, DependsOn: st.DependsOn})
			}
			def, err := s.automation.ValidateOrchestration(ctx, p, oin)
			if err != nil {
				return nil, err
			}
			if s.temporal == nil {
				return nil, models.Errorf(models.CodeDependencyUnavailable, "orchestration is unavailable: no workflow engine is configured")
			}
			scope := p.OwnScope()
			id := models.NewID(models.PrefixWorkflow)
			op, err := s.automation.CreateOrchestration(ctx, scope, def, id, p.ID)
			if err != nil {
				return nil, err
			}
			if err := s.startOrchestration(ctx, scope, def, p.ID); err != nil {
				if derr := s.automation.DeleteOrchestration(context.WithoutCancel(ctx), scope, id); derr != nil {
					s.log.ErrorContext(ctx, "removing an orchestration that did not start failed", "request_id", id, "error", derr)
				}
				e := models.Errorf(models.CodeDependencyUnavailable, "the workflow engine is unavailable; retry later").WithDetail("retry_after", 5)
				e.Cause = err
				return nil, e
			}
			out := &OrchestrationAcceptedOutput{Status: http.StatusAccepted, Location: s.statusURL(id)}
			b := &out.Body
			b.RequestID, b.WorkflowID, b.Type, b.Status, b.StatusURL = id, id, string(op.Type), string(op.Status), s.statusURL(id)
			b.Name, b.Trigger, b.CreatedAt = def.Name, def.Trigger, models.Timestamp(op.CreatedAt)
			return out, nil
		})
	register(s, huma.Operation{OperationID: "get-orchestration-workflow", Method: http.MethodGet, Path: "/services/orchestration/workflows/{workflow_id}",
		Summary: "Get an orchestration workflow (alias of GET /v1/operations/{request_id})", Tags: tags, Responses: eventStreamResponse(),
		Description: "The orchestration's operation document (a run: its steps, progress, result with the steps that ran, failed and were skipped " +
			"and each step's outputs; an event trigger: its runs as items) plus `orchestration`, its definition. " +
			"With `Accept: text/event-stream` the operation is streamed as Server-Sent Events, as GET /v1/operations/{request_id}."},
		access{}, func(ctx context.Context, in *orchestrationPath) (*OrchestrationOutput, error) {
			op, def, err := s.automation.GetOrchestration(ctx, principal(ctx), in.WorkflowID)
			if err != nil {
				return nil, err
			}
			out := &OrchestrationOutput{}
			out.Body.OperationDocument = s.operationDocument(op)
			s.addLiveDetail(ctx, &out.Body.OperationDocument, op)
			out.Body.Orchestration = orchestrationInfo(def)
			return out, nil
		})
}
