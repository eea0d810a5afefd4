package api

import (
	"context"
	"fmt"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/automation"
	"github.com/telcoplatform/platform/workflows"
)

// BulkOrchestrationBody is the `orchestration` object of a bulk request.
type BulkOrchestrationBody struct {
	Parallel          bool `json:"parallel,omitempty" doc:"Run items concurrently, at most max_concurrency at a time; false (the default) runs them one after another, in order"`
	RollbackOnFailure bool `json:"rollback_on_failure,omitempty" doc:"When an item fails, start no further items and undo every completed one; the operation ends rolled_back"`
	MaxConcurrency    int  `json:"max_concurrency,omitempty" minimum:"1" maximum:"50" example:"10" doc:"Items in flight at once when parallel (default 10, at most 50)"`
}

func (b *BulkOrchestrationBody) options() automation.BulkOptions {
	if b == nil {
		return automation.BulkOptions{}
	}
	return automation.BulkOptions{Parallel: b.Parallel, RollbackOnFailure: b.RollbackOnFailure, MaxConcurrency: b.MaxConcurrency}
}

// BulkCustomizations override an item's template defaults.
type BulkCustomizations struct {
	Bandwidth  string `json:"bandwidth,omitempty" maxLength:"20" example:"1gbps"`
	Redundancy string `json:"redundancy,omitempty" enum:"none,dual_path,diverse_path" maxLength:"20" example:"dual_path" doc:"none, dual_path or diverse_path"`
	Monitoring string `json:"monitoring,omitempty" enum:"basic,standard,advanced" maxLength:"20" example:"advanced" doc:"basic, standard or advanced"`
}

// BulkProvisionItemBody is one service of a bulk provisioning request.
type BulkProvisionItemBody struct {
	Template       string              `json:"template" required:"true" minLength:"1" maxLength:"60" example:"internet-dedicated-1g" doc:"Required: a template of GET /v1/services/provision/templates"`
	Location       string              `json:"location" required:"true" minLength:"1" maxLength:"300" example:"loc_austin_congress" doc:"Required: a location id (loc_...) or \"address, city, ST zip\""`
	Customizations *BulkCustomizations `json:"customizations,omitempty"`
}

// BulkProvisionBody is the bulk provisioning request, plus the
// billing account, which the specification leaves out.
type BulkProvisionBody struct {
	Services      []BulkProvisionItemBody `json:"services" required:"true" minItems:"1" maxItems:"1000" doc:"Required: 1 to 1,000 services"`
	Orchestration *BulkOrchestrationBody  `json:"orchestration,omitempty"`
	AccountID     string                  `json:"account_id,omitempty" maxLength:"64" doc:"Billing account of every item; default: the organization's oldest"`
}

// ServiceChangesBody are the changes of a bulk modification item.
type ServiceChangesBody struct {
	Name       string `json:"name,omitempty" maxLength:"200"`
	SLA        string `json:"sla,omitempty" enum:"standard,premium,enterprise" maxLength:"20" example:"enterprise" doc:"standard, premium or enterprise, as the service's catalog offer allows"`
	Bandwidth  string `json:"bandwidth,omitempty" maxLength:"20" example:"10gbps" doc:"One of the catalog offer's bandwidth_options (capacity is reserved)"`
	Redundancy string `json:"redundancy,omitempty" enum:"none,dual_path,diverse_path" maxLength:"20" example:"dual_path" doc:"none, dual_path or diverse_path"`
	Monitoring string `json:"monitoring,omitempty" enum:"basic,standard,advanced" maxLength:"20" example:"advanced" doc:"basic, standard or advanced"`
}

func (b *ServiceChangesBody) changes() automation.ServiceChanges {
	if b == nil {
		return automation.ServiceChanges{}
	}
	return automation.ServiceChanges{Name: b.Name, SLA: b.SLA, Bandwidth: b.Bandwidth, Redundancy: b.Redundancy, Monitoring: b.Monitoring}
}

// BulkModifyItemBody is one service of a bulk modification.
type BulkModifyItemBody struct {
	ServiceID string              `json:"service_id" required:"true" minLength:"1" maxLength:"64" example:"svc_3fK9aZ" doc:"Required"`
	Changes   *ServiceChangesBody `json:"changes,omitempty" doc:"This service's changes, over the request's common changes"`
}

// BulkModifyBody is the bulk modification request.
type BulkModifyBody struct {
	Services      []BulkModifyItemBody   `json:"services" required:"true" minItems:"1" maxItems:"1000" doc:"Required: 1 to 1,000 distinct services of one organization"`
	Changes       *ServiceChangesBody    `json:"changes,omitempty" doc:"Changes applied to every service (each item's own changes win); every service needs at least one change, here or in its item"`
	Orchestration *BulkOrchestrationBody `json:"orchestration,omitempty"`
}

// BulkStatusBody is POST /services/bulk/status (DECISIONS 5).
type BulkStatusBody struct {
	ServiceIDs    []string               `json:"service_ids" required:"true" minItems:"1" maxItems:"1000" example:"[\"svc_3fK9aZ\"]" doc:"Required: 1 to 1,000 services"`
	Action        string                 `json:"action,omitempty" enum:"suspend,resume" doc:"Without it the answer is each service's status (200); suspend or resume starts an operation (202)"`
	Orchestration *BulkOrchestrationBody `json:"orchestration,omitempty" doc:"With action only"`
}

// BulkRetryBody optionally overrides the retried operation's orchestration options.
type BulkRetryBody struct {
	Orchestration *BulkOrchestrationBody `json:"orchestration,omitempty" doc:"Default: the retried operation's"`
}

// BulkAccepted is the 202 answer of a call that starts a bulk operation.
type BulkAccepted struct {
	RequestID string `json:"request_id,omitempty" example:"bulk_3fK9aZ" doc:"The operation id, which is also the Temporal workflow id"`
	Type      string `json:"type,omitempty" example:"bulk_provision" doc:"bulk_provision, bulk_modify or bulk_status"`
	Status    string `json:"status,omitempty" example:"pending"`
	StatusURL string `json:"status_url,omitempty" example:"http://localhost:8080/v1/operations/bulk_3fK9aZ"`
	Total     int    `json:"total,omitempty" example:"200" doc:"Number of items; the operation's items list them in request order"`
	RetryOf   string `json:"retry_of,omitempty" doc:"The operation whose unfinished items this one runs again"`
	CreatedAt string `json:"created_at,omitempty"`
}

// BulkAcceptedOutput is the 202 answer of a bulk operation.
type BulkAcceptedOutput struct {
	Status   int
	Location string `header:"Location" doc:"The operation's status_url"`
	Body     struct {
		Envelope
		BulkAccepted
	}
}

// BulkServiceStatusItem is one service's status in a bulk status read.
type BulkServiceStatusItem struct {
	ServiceID       string              `json:"service_id" example:"svc_3fK9aZ"`
	Status          *string             `json:"status" example:"operational" doc:"null when the service does not exist (or is not yours)"`
	StatusChangedAt *string             `json:"status_changed_at"`
	Error           *OperationErrorItem `json:"error,omitempty" doc:"NOT_FOUND for a service that does not exist"`
}

// BulkStatusOutput is either each service's status (200, without action)
// or the operation started (202, with action).
type BulkStatusOutput struct {
	Status   int
	Location string `header:"Location" doc:"With action: the operation's status_url"`
	Body     struct {
		Envelope
		Services []BulkServiceStatusItem `json:"services,omitempty" doc:"Without action: each service's status, in request order"`
		BulkAccepted
	}
}

// taskQueues are the configured task queues, by priority (spec 8: bulk
// jobs are background priority).
func (s *Server) taskQueues() workflows.TaskQueues {
	return workflows.TaskQueues{Interactive: s.cfg.TemporalTaskQueue, Background: s.cfg.TemporalBackgroundTaskQueue}
}

// startBulk stores a planned bulk operation (pending) and starts its
// workflow on the background task queue under the operation's id; if the
// workflow cannot be started, the operation is removed and the answer is
// DEPENDENCY_UNAVAILABLE.
func (s *Server) startBulk(ctx context.Context, plan *automation.BulkPlan) (*BulkAccepted, error) {
	if s.temporal == nil {
		return nil, models.Errorf(models.CodeDependencyUnavailable, "bulk operations are unavailable: no workflow engine is configured")
	}
	p := principal(ctx)
	id := models.NewID(models.PrefixBulk)
	op, err := s.automation.CreateBulkOperation(ctx, plan, id, p.ID)
	if err != nil {
		return nil, err
	}
	ref := workflows.BulkRef{RequestID: id, OrganizationID: plan.Scope.OrganizationID, Environment: plan.Scope.Environment, Type: plan.Type, CreatedBy: p.ID}
	opts := workflows.StartOptions(s.taskQueues(), workflows.Start{ID: id, Priority: workflows.Background,
		OrganizationID: ref.OrganizationID, Environment: ref.Environment, OperationType: string(plan.Type), ResourceID: id,
		Summary: fmt.Sprintf("%s of %d items for %s (%s)", workflows.WorkLabel(string(plan.Type)), len(plan.Items), ref.OrganizationID, ref.Environment),
		Link:    s.statusURL(id)})
	in := workflows.BulkInput{Bulk: ref, Total: len(plan.Items), Options: plan.Options, Batch: workflows.DefaultBulkBatch}
	startCtx, cancel := context.WithTimeout(ctx, workflowStartTimeout)
	defer cancel()
	if _, err := s.temporal.ExecuteWorkflow(startCtx, opts, workflows.BulkWorkflow, in); err != nil {
		if derr := s.automation.DeleteBulkOperation(context.WithoutCancel(ctx), plan.Scope, id, plan.RetryOf); derr != nil {
			s.log.ErrorContext(ctx, "removing a bulk operation that did not start failed", "request_id", id, "error", derr)
		}
		e := models.Errorf(models.CodeDependencyUnavailable, "the workflow engine is unavailable; retry later").WithDetail("retry_after", 5)
		e.Cause = err
		return nil, e
	}
	return &BulkAccepted{RequestID: id, Type: string(plan.Type), Status: string(op.Status), StatusURL: s.statusURL(id),
		Total: len(plan.Items), RetryOf: plan.RetryOf, CreatedAt: models.Timestamp(op.CreatedAt)}, nil
}

func (s *Server) bulkAccepted(a *BulkAccepted) *BulkAcceptedOutput {
	out := &BulkAcceptedOutput{Status: http.StatusAccepted, Location: a.StatusURL}
	out.Body.BulkAccepted = *a
	return out
}

// registerBulk registers /services/bulk/* (fixed paths: before
// registerServices) and POST /operations/{request_id}/retry.
func (s *Server) registerBulk() {
	tags := []string{"Services: bulk operations"}
	accepted := "Answers 202 with the operation (`bulk_...`) to follow at status_url: its `items` give each item's status and error " +
		"in request order and `progress` counts them; it ends completed, partial, failed, rolled_back or cancelled. " +
		"Bulk jobs run on the background task queue. See docs/bulk-and-orchestration.md."
	register(s, huma.Operation{OperationID: "bulk-provision", Method: http.MethodPost, Path: "/services/bulk/provision",
		Summary: "Provision services in bulk", Tags: tags, DefaultStatus: http.StatusAccepted,
		Description: "Provisions 1 to 1,000 services from templates, each as its own provisioning (`prov_...`, the item's service id is in `items[].id`). " +
			"Every item is validated first (template, location, customizations, availability); an invalid item refuses the whole request " +
			"(400 with fields `services[i]...`, or 422 with `details.items`). " + accepted},
		access{permission: "services:write", mfa: true}, func(ctx context.Context, in *struct{ Body BulkProvisionBody }) (*BulkAcceptedOutput, error) {
			b := in.Body
			bin := automation.BulkProvisionInput{AccountID: b.AccountID, Options: b.Orchestration.options()}
			for _, it := range b.Services {
				item := automation.BulkProvisionItem{Template: it.Template, Location: it.Location}
				if c := it.Customizations; c != nil {
					item.Bandwidth, item.Redundancy, item.Monitoring = c.Bandwidth, c.Redundancy, c.Monitoring
				}
				bin.Items = append(bin.Items, item)
			}
			plan, err := s.automation.PrepareBulkProvision(ctx, principal(ctx), bin)
			if err != nil {
				return nil, err
			}
			a, err := s.startBulk(ctx, plan)
			if err != nil {
				return nil, err
			}
			return s.bulkAccepted(a), nil
		})
	register(s, huma.Operation{OperationID: "bulk-modify", Method: http.MethodPost, Path: "/services/bulk/modify",
		Summary: "Modify services in bulk", Tags: tags, DefaultStatus: http.StatusAccepted,
		Description: "Changes name, sla, bandwidth, redundancy or monitoring of 1 to 1,000 services, each as the modification " +
			"PUT /v1/services/{service_id} makes (its own mod_... operation, validated, priced, emitting service.modified). " +
			"Invalid changes refuse the request (400, fields services[i].changes...); a service that cannot change now (in maintenance: " +
			"SERVICE_MAINTENANCE; another change under way: SERVICE_CONFLICT; not delivered: INVALID_STATE_TRANSITION) fails as an item. " + accepted},
		access{permission: "services:write"}, func(ctx context.Context, in *struct{ Body BulkModifyBody }) (*BulkAcceptedOutput, error) {
			b := in.Body
			bin := automation.BulkModifyInput{Changes: b.Changes.changes(), Options: b.Orchestration.options()}
			for _, it := range b.Services {
				bin.Items = append(bin.Items, automation.BulkModifyItem{ServiceID: it.ServiceID, Changes: it.Changes.changes()})
			}
			plan, err := s.automation.PrepareBulkModify(ctx, principal(ctx), bin)
			if err != nil {
				return nil, err
			}
			a, err := s.startBulk(ctx, plan)
			if err != nil {
				return nil, err
			}
			return s.bulkAccepted(a), nil
		})
	register(s, huma.Operation{OperationID: "bulk-status", Method: http.MethodPost, Path: "/services/bulk/status",
		Summary: "Read or change the status of services in bulk", Tags: tags,
		Description: "Without `action`: answers 200 with each service's status, in request order (a service that does not exist, or is not " +
			"yours, has status null and error NOT_FOUND). With `action` suspend (operational, degraded or down → maintenance: the circuit is " +
			"turned down) or resume (maintenance → operational): starts an operation and answers 202; each change emits service.status_changed. " +
			accepted,
		Responses: map[string]*huma.Response{"202": {Description: "With action: the operation started (request_id, type, status, status_url, total, created_at)",
			Content: map[string]*huma.MediaType{"application/json": {Schema: &huma.Schema{Ref: "#/components/schemas/BulkStatusOutputBody"}}}}}},
		access{permission: "services:read"}, func(ctx context.Context, in *struct{ Body BulkStatusBody }) (*BulkStatusOutput, error) {
			p := principal(ctx)
			b := in.Body
			if b.Action == "" {
				if b.Orchestration != nil {
					return nil, models.Invalid(models.FieldIssue{Field: "orchestration", Issue: "applies only with an action"})
				}
				entries, err := s.automation.BulkServiceStatuses(ctx, p, b.ServiceIDs)
				if err != nil {
					return nil, err
				}
				out := &BulkStatusOutput{Status: http.StatusOK}
				out.Body.Services = mapSlice(entries, func(e *automation.ServiceStatusEntry) BulkServiceStatusItem {
					item := BulkServiceStatusItem{ServiceID: e.ServiceID}
					if !e.Found {
						item.Error = &OperationErrorItem{Code: string(models.CodeNotFound), Message: "service not found"}
						return item
					}
					status, changed := string(e.Status), models.Timestamp(e.StatusChangedAt)
					item.Status, item.StatusChangedAt = &status, &changed
					return item
				})
				return out, nil
			}
			if !p.Can("services:write") {
				return nil, models.Errorf(models.CodeInsufficientPermissions, "changing services' status needs permission services:write").
					WithDetail("required_permission", "services:write")
			}
			plan, err := s.automation.PrepareBulkStatus(ctx, p, automation.BulkStatusInput{ServiceIDs: b.ServiceIDs, Action: b.Action, Options: b.Orchestration.options()})
			if err != nil {
				return nil, err
			}
			a, err := s.startBulk(ctx, plan)
			if err != nil {
				return nil, err
			}
			out := &BulkStatusOutput{Status: http.StatusAccepted, Location: a.StatusURL}
			out.Body.BulkAccepted = *a
			return out, nil
		})
	register(s, huma.Operation{OperationID: "retry-operation", Method: http.MethodPost, Path: "/operations/{request_id}/retry",
		Summary: "Retry a bulk operation's unfinished items", Tags: []string{"Operations"}, DefaultStatus: http.StatusAccepted,
		Description: "Starts a new bulk operation of the same type with the items of a partial, failed, rolled_back or cancelled bulk operation " +
			"that did not complete (failed, rolled_back, skipped, cancelled), in their order, with the same orchestration options unless the body " +
			"gives others. Provisioning items are validated again and get new service ids. The new operation's result and input carry `retry_of`; " +
			"the retried one's result gets `retried_by`, and a second retry of it is 409 INVALID_STATE_TRANSITION. " +
			"Other operation types are 400; a running or completed one is 409. Like the provisioning it repeats, it challenges users with a second factor. " + accepted},
		access{permission: "services:write", mfa: true}, func(ctx context.Context, in *struct {
			RequestID string `path:"request_id" maxLength:"64" example:"bulk_3fK9aZ"`
			Body      *BulkRetryBody
		}) (*BulkAcceptedOutput, error) {
			var opts *automation.BulkOptions
			if in.Body != nil && in.Body.Orchestration != nil {
				o := in.Body.Orchestration.options()
				opts = &o
			}
			plan, err := s.automation.PrepareBulkRetry(ctx, principal(ctx), in.RequestID, opts)
			if err != nil {
				return nil, err
			}
			a, err := s.startBulk(ctx, plan)
			if err != nil {
				return nil, err
			}
			return s.bulkAccepted(a), nil
		})
}
