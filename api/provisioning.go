package api

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/catalog"
	"github.com/telcoplatform/platform/models/operations"
	"github.com/telcoplatform/platform/models/quotes"
	"github.com/telcoplatform/platform/models/services"
	"github.com/telcoplatform/platform/workflows"
)

// workflowStartTimeout bounds the call that starts a workflow.
const workflowStartTimeout = 10 * time.Second

// ProvisionCustomizations override a template's defaults.
type ProvisionCustomizations struct {
	Bandwidth  string `json:"bandwidth,omitempty" maxLength:"20" example:"1gbps"`
	Redundancy string `json:"redundancy,omitempty" enum:"none,dual_path,diverse_path" maxLength:"20" example:"dual_path" doc:"none, dual_path or diverse_path"`
	Monitoring string `json:"monitoring,omitempty" enum:"basic,standard,advanced" maxLength:"20" example:"advanced" doc:"basic, standard or advanced"`
}

// DeploymentSchedule says when to deploy.
type DeploymentSchedule struct {
	PreferredDate *time.Time `json:"preferred_date,omitempty" doc:"Provisioning starts at this time (within 365 days)"`
	Flexibility   string     `json:"flexibility,omitempty" maxLength:"10" example:"3_days"`
}

// ProvisionContacts are the order's contacts.
type ProvisionContacts struct {
	Technical string `json:"technical,omitempty" maxLength:"320" format:"email"`
	Billing   string `json:"billing,omitempty" maxLength:"320" format:"email"`
}

// ProvisionBody is the provisioning request, plus the account and
// the location, which the specification leaves out, and two more sources
// of an order besides a template: a quote (quote_id) or a kind with its
// create body (type and configuration).
type ProvisionBody struct {
	ServiceTemplate    string                   `json:"service_template" required:"false" maxLength:"60" example:"internet-dedicated-1g" doc:"A template of GET /v1/services/provision/templates; exactly one of service_template, quote_id and type is required"`
	Customizations     *ProvisionCustomizations `json:"customizations,omitempty"`
	DeploymentSchedule *DeploymentSchedule      `json:"deployment_schedule,omitempty"`
	Contacts           *ProvisionContacts       `json:"contacts,omitempty"`
	AccountID          string                   `json:"account_id,omitempty" maxLength:"64" doc:"Billing account; default: the organization's oldest"`
	Location           *LocationBody            `json:"location,omitempty" doc:"Where to deploy (or location_id)"`
	LocationID         string                   `json:"location_id,omitempty" maxLength:"60" example:"loc_austin_congress" doc:"Where to deploy, from the availability answer (or location)"`
	QuoteID            string                   `json:"quote_id,omitempty" maxLength:"40" example:"quo_3fK9aZ" doc:"Instead of a template: provision a service of this quote, at its prices"`
	QuoteItem          *int                     `json:"quote_item,omitempty" minimum:"0" maximum:"49" doc:"With quote_id: which of the quote's services (0-based; required when it has several)"`
	Type               string                   `json:"type,omitempty" maxLength:"40" example:"phone_system" doc:"Instead of a template: a kind of service (internet, network, phone_system, contact_center, cloud_infrastructure, cloud_platform, managed_security, security_infrastructure, ai_platform), with its create body in configuration"`
	Configuration      map[string]any           `json:"configuration,omitempty" doc:"With type: the create body of that kind (docs/services.md)"`
	Name               string                   `json:"name,omitempty" maxLength:"200" doc:"With quote_id or type: the service's name"`
}

func (b *ProvisionBody) input() services.TemplateInput {
	in := services.TemplateInput{ServiceTemplate: b.ServiceTemplate, AccountID: b.AccountID, LocationID: b.LocationID}
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
		ServiceID string `json:"service_id,omitempty" example:"svc_3fK9aZ" doc:"The service the operation acts on (provisioned, changed, scaled or decommissioned)"`
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

// TemplatesOutput lists the provisioning templates, a page at a time.
type TemplatesOutput struct {
	Body struct {
		Envelope
		Templates  []TemplateItem `json:"templates"`
		Pagination Pagination     `json:"pagination"`
	}
}

// templateSortKeys are the fields the templates list sorts by (sort=),
// each with the value it compares.
var templateSortKeys = map[string]func(*TemplateItem) string{
	"id":                 func(t *TemplateItem) string { return t.ID },
	"name":               func(t *TemplateItem) string { return t.Name },
	"catalog_service_id": func(t *TemplateItem) string { return t.CatalogServiceID },
	"service_type":       func(t *TemplateItem) string { return t.ServiceType },
}

// sortTemplates orders the templates (kept in memory: they are reference
// data) by the page request's sort fields; without any they keep the
// catalogue's order. A field it cannot sort by is 400 VALIDATION_ERROR.
func sortTemplates(items []TemplateItem, pr models.PageRequest) error {
	keys := make([]func(*TemplateItem) string, len(pr.Sort))
	for i, f := range pr.Sort {
		if keys[i] = templateSortKeys[f.Field]; keys[i] == nil {
			names := make([]string, 0, len(templateSortKeys))
			for name := range templateSortKeys {
				names = append(names, name)
			}
			slices.Sort(names)
			return models.Invalid(models.FieldIssue{Field: "sort", Issue: fmt.Sprintf("cannot sort by %q; sortable fields: %s", f.Field, strings.Join(names, ", "))})
		}
	}
	slices.SortStableFunc(items, func(a, b TemplateItem) int {
		for i, f := range pr.Sort {
			c := strings.Compare(keys[i](&a), keys[i](&b))
			if f.Desc {
				c = -c
			}
			if c != 0 {
				return c
			}
		}
		return 0
	})
	return nil
}

func (s *Server) statusURL(id string) string { return s.cfg.PublicBaseURL + "/v1/operations/" + id }

func (s *Server) taskQueue() string { return s.taskQueues().For(workflows.Interactive) }

// operationStart is an operation to store and the workflow that runs it.
type operationStart struct {
	scope     models.Scope
	op        *operations.Operation
	workflow  string
	input     any
	serviceID string
	priority  workflows.Priority              // the task queue's class (default interactive)
	store     func(ctx context.Context) error // stores op (with whatever else must be stored with it)
	abandon   func(ctx context.Context) error // undoes store when the workflow cannot be started
}

// startOperation stores an operation (pending) and starts its workflow
// under the operation's id, with the search attributes OrganizationId,
// Environment, OperationType and ResourceId. If the workflow cannot be
// started what was stored is undone and the answer is DEPENDENCY_UNAVAILABLE.
func (s *Server) startOperation(ctx context.Context, st operationStart) (*OperationAcceptedOutput, error) {
	if s.temporal == nil {
		return nil, models.Errorf(models.CodeDependencyUnavailable, "%s is unavailable: no workflow engine is configured", st.op.Type)
	}
	if err := st.store(ctx); err != nil {
		return nil, err
	}
	opts := workflows.StartOptions(s.taskQueues(), workflows.Start{ID: st.op.ID, Priority: st.priority,
		OrganizationID: st.scope.OrganizationID, Environment: st.scope.Environment, OperationType: string(st.op.Type), ResourceID: st.serviceID,
		Link: s.statusURL(st.op.ID)})
	startCtx, cancel := context.WithTimeout(ctx, workflowStartTimeout)
	defer cancel()
	if _, err := s.temporal.ExecuteWorkflow(startCtx, opts, st.workflow, st.input); err != nil {
		if derr := st.abandon(context.WithoutCancel(ctx)); derr != nil {
			s.log.ErrorContext(ctx, "removing an operation that did not start failed", "request_id", st.op.ID, "error", derr)
		}
		e := models.Errorf(models.CodeDependencyUnavailable, "the workflow engine is unavailable; retry later").WithDetail("retry_after", 5)
		e.Cause = err
		return nil, e
	}
	out := &OperationAcceptedOutput{Status: http.StatusAccepted, Location: s.statusURL(st.op.ID)}
	out.Body.RequestID, out.Body.Type, out.Body.Status = st.op.ID, string(st.op.Type), string(st.op.Status)
	out.Body.StatusURL, out.Body.ServiceID, out.Body.CreatedAt = s.statusURL(st.op.ID), st.serviceID, models.Timestamp(st.op.CreatedAt)
	return out, nil
}

// startProvisioning creates the operation row (pending) and starts the
// provisioning workflow under the operation's id; an order from a quote
// claims its quote item in the same step. If the workflow cannot be started
// the row (and the claim) are removed and the answer is DEPENDENCY_UNAVAILABLE.
func (s *Server) startProvisioning(ctx context.Context, o *services.ProvisioningOrder, scope models.Scope) (*OperationAcceptedOutput, error) {
	p := principal(ctx)
	opID, svcID := models.NewID(models.PrefixProvisioning), models.NewID(models.PrefixService)
	scheduled := o.PreferredDate != nil && o.PreferredDate.After(s.now())
	op := operations.NewOperation(opID, operations.OpTypeProvisioning, svcID, p.ID, operations.ProvisioningSteps(scheduled), models.AsMap(o))
	in := workflows.ProvisioningInput{
		RequestID: opID, OrganizationID: scope.OrganizationID, Environment: scope.Environment,
		ServiceID: svcID, Scheduled: scheduled, Order: *o,
	}
	return s.startOperation(ctx, operationStart{scope: scope, op: op, workflow: workflows.ProvisioningWorkflow, input: in, serviceID: svcID,
		store: func(ctx context.Context) error {
			if o.QuoteID != "" {
				if err := s.quotes.ClaimQuoteItem(ctx, scope, o.QuoteID, o.QuoteItem, svcID, opID); err != nil {
					return err
				}
			}
			if err := s.operations.CreateOperation(ctx, scope, op); err != nil {
				if o.QuoteID != "" {
					_ = s.quotes.ReleaseQuoteItem(context.WithoutCancel(ctx), scope, o.QuoteID, o.QuoteItem, opID)
				}
				return err
			}
			return nil
		},
		abandon: func(ctx context.Context) error {
			if o.QuoteID != "" {
				if err := s.quotes.ReleaseQuoteItem(ctx, scope, o.QuoteID, o.QuoteItem, opID); err != nil {
					return err
				}
			}
			return s.operations.DeleteOperation(ctx, scope, opID)
		},
	})
}

// startServiceChange starts the change u of svc (a modification or a
// scaling): the operation claims the service (one change at a time).
func (s *Server) startServiceChange(ctx context.Context, svc *services.Service, u *services.ServiceUpdate, scope models.Scope) (*OperationAcceptedOutput, error) {
	prefix := services.PrefixModification
	if u.Type == services.OpTypeScaling {
		prefix = services.PrefixScaling
	}
	opID := models.NewID(prefix)
	op := operations.NewOperation(opID, u.Type, svc.ID, principal(ctx).ID, services.UpdateSteps(u), models.AsMap(map[string]any{"update": u, "changes": u.Changes}))
	in := workflows.ServiceChangeInput{RequestID: opID, OrganizationID: scope.OrganizationID, Environment: scope.Environment, ServiceID: svc.ID, Update: *u}
	return s.startOperation(ctx, operationStart{scope: scope, op: op, workflow: workflows.ServiceChangeWorkflow, input: in, serviceID: svc.ID,
		store:   func(ctx context.Context) error { return s.services.StartServiceOperation(ctx, scope, svc.ID, op) },
		abandon: func(ctx context.Context) error { return s.services.AbandonServiceOperation(ctx, scope, svc.ID, opID) },
	})
}

// startDecommission starts the decommission of svc (dec_).
func (s *Server) startDecommission(ctx context.Context, svc *services.Service, plan *services.DecommissionPlan, scope models.Scope) (*OperationAcceptedOutput, error) {
	opID := models.NewID(models.PrefixDecommission)
	scheduled := plan.Scheduled(s.now())
	op := operations.NewOperation(opID, services.OpTypeDecommission, svc.ID, principal(ctx).ID, services.DecommissionSteps(plan, scheduled), models.AsMap(plan))
	in := workflows.DecommissionInput{RequestID: opID, OrganizationID: scope.OrganizationID, Environment: scope.Environment, ServiceID: svc.ID,
		Scheduled: scheduled, Plan: *plan}
	return s.startOperation(ctx, operationStart{scope: scope, op: op, workflow: workflows.DecommissionWorkflow, input: in, serviceID: svc.ID,
		store:   func(ctx context.Context) error { return s.services.StartServiceOperation(ctx, scope, svc.ID, op) },
		abandon: func(ctx context.Context) error { return s.services.AbandonServiceOperation(ctx, scope, svc.ID, opID) },
	})
}

// prepareProvision validates a provisioning request from any of its
// sources: a template, a quote, or a kind with its create body.
func (s *Server) prepareProvision(ctx context.Context, b *ProvisionBody) (*services.ProvisioningOrder, models.Scope, error) {
	p := principal(ctx)
	sources := 0
	for _, given := range []bool{b.ServiceTemplate != "", b.QuoteID != "", b.Type != ""} {
		if given {
			sources++
		}
	}
	switch {
	case sources > 1:
		return nil, models.Scope{}, models.Invalid(models.FieldIssue{Field: "service_template", Issue: "give one of service_template, quote_id and type"})
	case b.QuoteID != "":
		var v models.Validator
		v.Check(b.Customizations == nil, "customizations", "do not apply to a quote: its services are priced as quoted")
		v.Check(b.Location == nil && b.LocationID == "" && b.AccountID == "", "location", "location, location_id and account_id come from the quote")
		v.Check(b.Configuration == nil, "configuration", "goes with type, not quote_id")
		if err := v.Err(); err != nil {
			return nil, models.Scope{}, err
		}
		in := quotes.QuoteOrderInput{QuoteID: b.QuoteID, Item: b.QuoteItem, Name: b.Name}
		if d := b.DeploymentSchedule; d != nil {
			in.PreferredDate, in.Flexibility = d.PreferredDate, d.Flexibility
		}
		if c := b.Contacts; c != nil {
			in.TechnicalContact, in.BillingContact = c.Technical, c.Billing
		}
		return s.quotes.PrepareQuoteOrder(ctx, p, in)
	case b.Type != "":
		var v models.Validator
		v.Check(b.Customizations == nil, "customizations", "go with service_template; put the settings in configuration")
		v.Check(b.Location == nil && b.LocationID == "", "location", "goes in configuration, as the kind's body has it")
		v.Check(b.QuoteItem == nil, "quote_item", "goes with quote_id")
		if err := v.Err(); err != nil {
			return nil, models.Scope{}, err
		}
		spec := map[string]any{}
		for k, val := range b.Configuration {
			spec[k] = val
		}
		if _, has := spec["account_id"]; !has && b.AccountID != "" {
			spec["account_id"] = b.AccountID
		}
		if _, has := spec["name"]; !has && b.Name != "" {
			spec["name"] = b.Name
		}
		if _, has := spec["contacts"]; !has && b.Contacts != nil {
			spec["contacts"] = map[string]any{"technical": b.Contacts.Technical, "billing": b.Contacts.Billing}
		}
		body, err := services.DecodeKindBody("configuration", b.Type, spec)
		if err != nil {
			if models.ErrorCode(err) == models.CodeValidation && models.AsError(err).Details["fields"].([]models.FieldIssue)[0].Field == "configuration" && !slices.Contains(services.KindNames(), b.Type) {
				return nil, models.Scope{}, models.Invalid(models.FieldIssue{Field: "type", Issue: "must be one of " + strings.Join(services.KindNames(), ", ")})
			}
			return nil, models.Scope{}, err
		}
		o, scope, err := s.services.PrepareServiceOrder(ctx, p, body)
		if err != nil {
			return nil, models.Scope{}, err
		}
		if d := b.DeploymentSchedule; d != nil {
			if err := s.services.ScheduleOrder(o, d.PreferredDate, d.Flexibility); err != nil {
				return nil, models.Scope{}, err
			}
		}
		return o, scope, nil
	}
	if b.QuoteItem != nil || b.Configuration != nil || b.Name != "" {
		return nil, models.Scope{}, models.Invalid(models.FieldIssue{Field: "service_template", Issue: "quote_item, configuration and name go with quote_id or type"})
	}
	return s.services.PrepareTemplateOrder(ctx, p, b.input())
}

func (s *Server) registerProvisioning() {
	tags := []string{"Services: provisioning"}
	accepted := "Answers 202 with the operation to follow: GET status_url (or with `Accept: text/event-stream` for Server-Sent " +
		"Events) until a terminal status; request_id is also the Temporal workflow id. See docs/operations.md."
	register(s, huma.Operation{OperationID: "list-provisioning-templates", Method: http.MethodGet, Path: "/services/provision/templates",
		Summary: "Provisioning templates", Tags: tags,
		Description: "The templates that POST /services/provision accepts, each tied to a catalog service, in the catalogue's order " +
			"(sortable by id, name, catalog_service_id, service_type), with the usual list parameters and pagination. " +
			"Sandbox keys also see the sandbox templates (docs/sandbox.md)."},
		access{permission: "services:read"}, func(ctx context.Context, in *struct{ ListParams }) (*TemplatesOutput, error) {
			pr, err := in.page()
			if err != nil {
				return nil, err
			}
			tpls, err := s.catalog.Templates(ctx, principal(ctx).Environment)
			if err != nil {
				return nil, err
			}
			all := mapSlice(tpls, func(t *catalog.ProvisioningTemplate) TemplateItem {
				return TemplateItem{ID: t.ID, Name: t.Name, Description: t.Description, CatalogServiceID: t.CatalogServiceID, ServiceType: t.ServiceType,
					Bandwidth: t.DefaultBandwidth, SLA: t.DefaultSLA, Redundancy: t.Redundancy, Monitoring: t.Monitoring, SandboxOnly: t.SandboxOnly, FailAtStep: t.FailAtStep}
			})
			if err := sortTemplates(all, pr); err != nil {
				return nil, err
			}
			out := &TemplatesOutput{}
			out.Body.Templates, out.Body.Pagination = pageOf(all, pr)
			return out, nil
		})
	provisionDesc := "Validates the provisioning request and starts provisioning, at deployment_schedule.preferred_date " +
		"when it is in the future. The order comes from exactly one of: service_template (with customizations, plus account_id, " +
		"default the organization's oldest billing account, and location or location_id); quote_id (a service of a quote, at " +
		"its prices; quote_item picks it); or type with configuration (any kind's create body, docs/services.md). Contacts are " +
		"notified of the outcome. " + accepted
	provision := func(ctx context.Context, in *struct{ Body ProvisionBody }) (*OperationAcceptedOutput, error) {
		o, scope, err := s.prepareProvision(ctx, &in.Body)
		if err != nil {
			return nil, err
		}
		return s.startProvisioning(ctx, o, scope)
	}
	register(s, huma.Operation{OperationID: "provision-service", Method: http.MethodPost, Path: "/services/provision",
		Summary: "Provision a service (template, quote or kind)", Tags: tags, DefaultStatus: http.StatusAccepted, Description: provisionDesc},
		access{permission: "services:write", mfa: true}, provision)
	register(s, huma.Operation{OperationID: "create-service", Method: http.MethodPost, Path: "/services",
		Summary: "Provision a service (overview path; same as POST /services/provision)", Tags: []string{"Services"}, DefaultStatus: http.StatusAccepted,
		Description: provisionDesc},
		access{permission: "services:write", mfa: true}, provision)
}
