package api

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/workflows"
)

// workflowStartTimeout bounds the call that starts a workflow.
const workflowStartTimeout = 10 * time.Second

// InternetServiceBody is the internet service create body (spec 2.1). Its
// required fields are marked required:"false" for huma so that the domain
// validation (models) reports every missing or invalid field by name.
type InternetServiceBody struct {
	AccountID    string       `json:"account_id" required:"false" maxLength:"64" example:"acct_3fK9aZ" doc:"Required: a billing account of the caller's organization"`
	ServiceType  string       `json:"service_type" required:"false" maxLength:"40" example:"fiber_dedicated" doc:"Required: fiber_dedicated or fiber_business"`
	Bandwidth    string       `json:"bandwidth" required:"false" maxLength:"20" example:"1gbps" doc:"Required: <n>mbps or <n>gbps, lowercase, one of the catalog's options"`
	Location     LocationBody `json:"location" required:"false" doc:"Required"`
	SLA          string       `json:"sla" required:"false" maxLength:"20" example:"premium" doc:"Required: standard, premium or enterprise (as the catalog offers)"`
	BillingCycle string       `json:"billing_cycle,omitempty" maxLength:"20" example:"monthly" doc:"monthly (the default)"`
}

// ProvisionCustomizations override a template's defaults (spec 2.2).
type ProvisionCustomizations struct {
	Bandwidth  string `json:"bandwidth,omitempty" maxLength:"20" example:"1gbps"`
	Redundancy string `json:"redundancy,omitempty" maxLength:"20" example:"dual_path" doc:"none, dual_path or diverse_path"`
	Monitoring string `json:"monitoring,omitempty" maxLength:"20" example:"advanced" doc:"basic, standard or advanced"`
}

// DeploymentSchedule says when to deploy (spec 2.2).
type DeploymentSchedule struct {
	PreferredDate *time.Time `json:"preferred_date,omitempty" doc:"Provisioning starts at this time (within 365 days)"`
	Flexibility   string     `json:"flexibility,omitempty" maxLength:"10" example:"3_days"`
}

// ProvisionContacts are the order's contacts (spec 2.2).
type ProvisionContacts struct {
	Technical string `json:"technical,omitempty" maxLength:"320" format:"email"`
	Billing   string `json:"billing,omitempty" maxLength:"320" format:"email"`
}

// ProvisionBody is the provisioning request (spec 2.2), plus the account and
// the location, which the specification leaves out.
type ProvisionBody struct {
	ServiceTemplate    string                   `json:"service_template" required:"false" maxLength:"60" example:"internet-dedicated-1g" doc:"Required: a template of GET /v1/services/provision/templates"`
	Customizations     *ProvisionCustomizations `json:"customizations,omitempty"`
	DeploymentSchedule *DeploymentSchedule      `json:"deployment_schedule,omitempty"`
	Contacts           *ProvisionContacts       `json:"contacts,omitempty"`
	AccountID          string                   `json:"account_id,omitempty" maxLength:"64" doc:"Billing account; default: the organization's oldest"`
	Location           *LocationBody            `json:"location,omitempty" doc:"Where to deploy (or location_id)"`
	LocationID         string                   `json:"location_id,omitempty" maxLength:"60" example:"loc_austin_congress" doc:"Where to deploy, from the availability answer (or location)"`
}

func (b *ProvisionBody) input() models.TemplateInput {
	in := models.TemplateInput{ServiceTemplate: b.ServiceTemplate, AccountID: b.AccountID, LocationID: b.LocationID}
	if c := b.Customizations; c != nil {
		in.Bandwidth, in.Redundancy, in.Monitoring = c.Bandwidth, c.Redundancy, c.Monitoring
	}
	if d := b.DeploymentSchedule; d != nil {
		in.PreferredDate, in.Flexibility = d.PreferredDate, d.Flexibility
	}
	if c := b.Contacts; c != nil {
		in.TechnicalContact, in.BillingContact = c.Technical, c.Billing
	}
	if b.Location != nil {
		loc := b.Location.input()
		in.Location = &loc
	}
	return in
}

// OperationAcceptedOutput is the 202 answer of every call that starts an
// operation (DECISIONS 5).
type OperationAcceptedOutput struct {
	Status   int
	Location string `header:"Location" doc:"The operation's status_url"`
	Body     struct {
		Envelope
		RequestID string `json:"request_id" example:"prov_3fK9aZ" doc:"The operation id, which is also the Temporal workflow id"`
		Type      string `json:"type" example:"provisioning"`
		Status    string `json:"status" example:"pending"`
		StatusURL string `json:"status_url" example:"http://localhost:8080/v1/operations/prov_3fK9aZ"`
		ServiceID string `json:"service_id,omitempty" example:"svc_3fK9aZ" doc:"The service being provisioned"`
		CreatedAt string `json:"created_at"`
	}
}

// TemplateItem is a provisioning template.
type TemplateItem struct {
	ID               string `json:"id" example:"internet-dedicated-1g"`
	Name             string `json:"name"`
	Description      string `json:"description"`
	CatalogServiceID string `json:"catalog_service_id" example:"internet-fiber-dedicated"`
	ServiceType      string `json:"service_type" example:"fiber_dedicated"`
	Bandwidth        string `json:"bandwidth" example:"1gbps"`
	SLA              string `json:"sla" example:"premium"`
	Redundancy       string `json:"redundancy" example:"none"`
	Monitoring       string `json:"monitoring" example:"standard"`
	SandboxOnly      bool   `json:"sandbox_only,omitempty"`
	FailAtStep       string `json:"fail_at_step,omitempty" doc:"Sandbox magic value: provisioning fails at this step"`
}

// TemplatesOutput lists the provisioning templates.
type TemplatesOutput struct {
	Body struct {
		Envelope
		Templates []TemplateItem `json:"templates"`
	}
}

func (s *Server) statusURL(id string) string { return s.cfg.PublicBaseURL + "/v1/operations/" + id }

func (s *Server) taskQueue() string {
	if s.cfg.TemporalTaskQueue != "" {
		return s.cfg.TemporalTaskQueue
	}
	return workflows.TaskQueue
}

// startProvisioning creates the operation row (pending) and starts the
// provisioning workflow under the operation's id. If the workflow cannot be
// started the row is removed and the answer is DEPENDENCY_UNAVAILABLE.
func (s *Server) startProvisioning(ctx context.Context, o *models.ProvisioningOrder, scope models.Scope) (*OperationAcceptedOutput, error) {
	if s.temporal == nil {
		return nil, models.Errorf(models.CodeDependencyUnavailable, "provisioning is unavailable: no workflow engine is configured")
	}
	p := principal(ctx)
	opID, svcID := models.NewID(models.PrefixProvisioning), models.NewID(models.PrefixService)
	scheduled := o.PreferredDate != nil && o.PreferredDate.After(s.now())
	var input map[string]any
	if raw, err := json.Marshal(o); err == nil {
		_ = json.Unmarshal(raw, &input)
	}
	op := models.NewOperation(opID, models.OpTypeProvisioning, svcID, p.ID, models.ProvisioningSteps(scheduled), input)
	if err := s.store.CreateOperation(ctx, scope, op); err != nil {
		return nil, err
	}
	opts := client.StartWorkflowOptions{
		ID:                                       opID,
		TaskQueue:                                s.taskQueue(),
		WorkflowIDReusePolicy:                    enums.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		WorkflowExecutionErrorWhenAlreadyStarted: true,
		TypedSearchAttributes: temporal.NewSearchAttributes(
			workflows.OrganizationIDKey.ValueSet(scope.OrganizationID),
			workflows.EnvironmentKey.ValueSet(string(scope.Environment)),
			workflows.OperationTypeKey.ValueSet(string(models.OpTypeProvisioning)),
			workflows.ResourceIDKey.ValueSet(svcID),
		),
	}
	in := workflows.ProvisioningInput{
		RequestID: opID, OrganizationID: scope.OrganizationID, Environment: scope.Environment,
		ServiceID: svcID, Scheduled: scheduled, Order: *o,
	}
	startCtx, cancel := context.WithTimeout(ctx, workflowStartTimeout)
	defer cancel()
	if _, err := s.temporal.ExecuteWorkflow(startCtx, opts, workflows.ProvisioningWorkflow, in); err != nil {
		if derr := s.store.DeleteOperation(context.WithoutCancel(ctx), scope, opID); derr != nil {
			s.log.ErrorContext(ctx, "removing an operation that did not start failed", "request_id", opID, "error", derr)
		}
		e := models.Errorf(models.CodeDependencyUnavailable, "the workflow engine is unavailable; retry later").WithDetail("retry_after", 5)
		e.Cause = err
		return nil, e
	}
	out := &OperationAcceptedOutput{Status: http.StatusAccepted, Location: s.statusURL(opID)}
	out.Body.RequestID, out.Body.Type, out.Body.Status = opID, string(op.Type), string(op.Status)
	out.Body.StatusURL, out.Body.ServiceID, out.Body.CreatedAt = s.statusURL(opID), svcID, models.Timestamp(op.CreatedAt)
	return out, nil
}

func (s *Server) registerProvisioning() {
	tags := []string{"Services: provisioning"}
	accepted := "Answers 202 with the operation to follow: GET status_url (or with `Accept: text/event-stream` for Server-Sent " +
		"Events) until a terminal status; request_id is also the Temporal workflow id. See docs/operations.md."
	register(s, huma.Operation{OperationID: "create-internet-service", Method: http.MethodPost, Path: "/services/connectivity/internet",
		Summary: "Provision an internet service", Tags: tags, DefaultStatus: http.StatusAccepted,
		Description: "Validates the body (spec 2.1) and availability at the location, then starts provisioning. " + accepted},
		access{permission: "services:write"}, func(ctx context.Context, in *struct{ Body InternetServiceBody }) (*OperationAcceptedOutput, error) {
			b := in.Body
			o, scope, err := s.store.PrepareInternetOrder(ctx, principal(ctx), models.InternetInput{
				AccountID: b.AccountID, ServiceType: b.ServiceType, Bandwidth: b.Bandwidth, Location: b.Location.input(), SLA: b.SLA, BillingCycle: b.BillingCycle,
			})
			if err != nil {
				return nil, err
			}
			return s.startProvisioning(ctx, o, scope)
		})
	register(s, huma.Operation{OperationID: "list-provisioning-templates", Method: http.MethodGet, Path: "/services/provision/templates",
		Summary: "Provisioning templates", Tags: tags,
		Description: "The templates that POST /services/provision accepts, each tied to a catalog service. Sandbox keys also see the sandbox templates (docs/sandbox.md)."},
		access{permission: "services:read"}, func(ctx context.Context, _ *struct{}) (*TemplatesOutput, error) {
			tpls, err := s.store.Templates(ctx, principal(ctx).Environment)
			if err != nil {
				return nil, err
			}
			out := &TemplatesOutput{}
			out.Body.Templates = mapSlice(tpls, func(t *models.ProvisioningTemplate) TemplateItem {
				return TemplateItem{ID: t.ID, Name: t.Name, Description: t.Description, CatalogServiceID: t.CatalogServiceID, ServiceType: t.ServiceType,
					Bandwidth: t.DefaultBandwidth, SLA: t.DefaultSLA, Redundancy: t.Redundancy, Monitoring: t.Monitoring, SandboxOnly: t.SandboxOnly, FailAtStep: t.FailAtStep}
			})
			return out, nil
		})
	register(s, huma.Operation{OperationID: "provision-service", Method: http.MethodPost, Path: "/services/provision",
		Summary: "Provision a service from a template", Tags: tags, DefaultStatus: http.StatusAccepted,
		Description: "Validates the provisioning request (spec 2.2: template, customizations, schedule, contacts) plus account_id " +
			"(default: the organization's oldest billing account) and location (or location_id), checks availability, then starts " +
			"provisioning, at deployment_schedule.preferred_date when it is in the future. " + accepted},
		access{permission: "services:write"}, func(ctx context.Context, in *struct{ Body ProvisionBody }) (*OperationAcceptedOutput, error) {
			o, scope, err := s.store.PrepareTemplateOrder(ctx, principal(ctx), in.Body.input())
			if err != nil {
				return nil, err
			}
			return s.startProvisioning(ctx, o, scope)
		})
}
