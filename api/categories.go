package api

import (
	"context"
	"net/http"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/telcoplatform/platform/models/catalog"
	"github.com/telcoplatform/platform/models/services"
)

// categoryListInput is the query of a category collection's list.
type categoryListInput struct {
	ListParams
	ServiceFilterParams
}

// InternetUpdateBody changes an internet service (PUT
// /services/connectivity/internet/{service_id}); the specification shows no
// body, this one is of our design (docs/services.md). A bandwidth change
// reserves the new bandwidth in place of the old at once; to wait for a
// maintenance window use PUT /services/{service_id}/scaling.
type InternetUpdateBody struct {
	Name          string                  `json:"name,omitempty" maxLength:"200"`
	Bandwidth     string                  `json:"bandwidth,omitempty" maxLength:"20" example:"10gbps" doc:"One of the offer's options"`
	SLA           string                  `json:"sla,omitempty" maxLength:"20" example:"enterprise"`
	Contacts      *services.OrderContacts `json:"contacts,omitempty"`
	Features      *[]string               `json:"features,omitempty" maxItems:"20" doc:"Replaces the features: static_ip, ipv6, ddos_protection, managed_router, bgp"`
	Configuration map[string]any          `json:"configuration,omitempty" doc:"Settings to set (null removes one); see PUT /services/{service_id}/configuration"`
}

// strPtr is s, or nil (JSON null) when s is empty.
func strPtr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// kindText describes a kind's create body for its POST operation.
func kindText(prof services.KindProfile) string {
	switch prof.Kind {
	case catalog.KindInternet:
		return "the internet service body; a second internet service of the same billing account at the same location is 409 SERVICE_CONFLICT"
	case catalog.KindNetwork:
		return "the network deployment body: network_type, topology (hub_and_spoke needs exactly one hub), locations (serviceable location ids), bandwidth per site, redundancy"
	case services.KindPhoneSystem:
		return "the phone system body: system_type, features, users, phone_numbers (local by area code, or toll_free; assigned from the number blocks), integrations"
	case services.KindContactCenter:
		return "the contact center body: center_type, channels, agent_count, features, ai_features"
	case services.KindCloudInfrastructure:
		return "the cloud infrastructure body: deployment_type, providers, regions, resources (virtual machines and load balancers), auto_scaling (min_instances <= max_instances)"
	case services.KindCloudPlatform:
		return "its create body: runtime, region, environments, instance_size, instances, custom_domains, database"
	case services.KindManagedSecurity:
		return "the managed security body: service_type, coverage, services, threat_intelligence, compliance_frameworks, response_time (<n>_minutes, <n>_hour, <n>_hours)"
	case services.KindSecurityInfrastructure:
		return "its create body: infrastructure_type, throughput, location or location_id, high_availability, features, protected_networks (CIDR)"
	case services.KindAIPlatform:
		return "the AI platform body: platform_type, capabilities, compute_tier, data_sources, models"
	}
	return "its create body"
}

// registerKind registers the collection of one kind: GET lists the tenant's
// services of that kind, POST validates the kind's create body B and starts
// its provisioning.
func registerKind[B any, PB interface {
	*B
	services.KindBody
}](s *Server, kind, listID, createID string) {
	prof, _ := services.LookupKind(kind)
	tags := []string{"Services: " + prof.Category}
	title := prof.Title
	register(s, huma.Operation{OperationID: listID, Method: http.MethodGet, Path: prof.Collection,
		Summary: "List " + title + "s", Tags: tags,
		Description: "The organization's services of kind " + prof.Kind + ", with the filters of GET /v1/services (status, location, account_id, " +
			"search with fields, date_from, date_to, filter), sort and page or cursor pagination."},
		access{permission: "services:read"}, func(ctx context.Context, in *categoryListInput) (*ServicesOutput, error) {
			return s.listServices(ctx, in.ListParams, in.ServiceFilterParams, prof.Kind)
		})
	register(s, huma.Operation{OperationID: createID, Method: http.MethodPost, Path: prof.Collection,
		Summary: "Provision a " + title, Tags: tags, DefaultStatus: http.StatusAccepted,
		Description: "Validates " + kindText(prof) + ", plus the optional account_id (default: the organization's oldest billing account; " +
			"required for internet), name and contacts, and availability (bandwidth, compute, numbers), then starts provisioning. " +
			"A 400 VALIDATION_ERROR lists every invalid field. Answers 202 with the operation to follow (docs/operations.md); " +
			"the body is documented in docs/services.md."},
		access{permission: "services:write", mfa: true}, func(ctx context.Context, in *struct{ Body B }) (*OperationAcceptedOutput, error) {
			o, scope, err := s.services.PrepareServiceOrder(ctx, principal(ctx), PB(&in.Body))
			if err != nil {
				return nil, err
			}
			return s.startProvisioning(ctx, o, scope)
		})
}

// registerCategories registers the nine category collections and the
// internet service's PUT and DELETE. Fixed paths: call before registerServices.
func (s *Server) registerCategories() {
	registerKind[services.InternetBody](s, catalog.KindInternet, "list-internet-services", "create-internet-service")
	registerKind[services.NetworkBody](s, catalog.KindNetwork, "list-networks", "create-network")
	registerKind[services.PhoneSystemBody](s, services.KindPhoneSystem, "list-phone-systems", "create-phone-system")
	registerKind[services.ContactCenterBody](s, services.KindContactCenter, "list-contact-centers", "create-contact-center")
	registerKind[services.CloudInfrastructureBody](s, services.KindCloudInfrastructure, "list-cloud-infrastructure", "create-cloud-infrastructure")
	registerKind[services.CloudPlatformBody](s, services.KindCloudPlatform, "list-cloud-platforms", "create-cloud-platform")
	registerKind[services.ManagedSecurityBody](s, services.KindManagedSecurity, "list-managed-security", "create-managed-security")
	registerKind[services.SecurityInfrastructureBody](s, services.KindSecurityInfrastructure, "list-security-infrastructure", "create-security-infrastructure")
	registerKind[services.AIPlatformBody](s, services.KindAIPlatform, "list-ai-platforms", "create-ai-platform")

	tags := []string{"Services: connectivity"}
	register(s, huma.Operation{OperationID: "update-internet-service", Method: http.MethodPut, Path: "/services/connectivity/internet/{service_id}",
		Summary: "Change an internet service", Tags: tags, DefaultStatus: http.StatusAccepted,
		Description: "Changes the name, bandwidth (at once, reserving the new bandwidth in place of the old), SLA, contacts, features or " +
			"configuration of an internet service: a modification operation (mod_), answered 202. Another kind's id is 404. " +
			"409 INVALID_STATE_TRANSITION when the service is not delivered, 409 SERVICE_CONFLICT while another change runs, " +
			"503 SERVICE_MAINTENANCE (Retry-After) during maintenance, 422 INSUFFICIENT_BANDWIDTH."},
		access{permission: "services:write"}, func(ctx context.Context, in *struct {
			ServicePath
			Body InternetUpdateBody
		}) (*OperationAcceptedOutput, error) {
			p := principal(ctx)
			if _, err := s.services.ServiceOfKind(ctx, p, catalog.KindInternet, in.ServiceID); err != nil {
				return nil, err
			}
			b := in.Body
			svc, u, scope, err := s.services.PrepareServiceUpdate(ctx, p, in.ServiceID, services.ServiceUpdateInput{
				Name: strPtr(strings.TrimSpace(b.Name)), SLA: strPtr(b.SLA), Bandwidth: strPtr(b.Bandwidth), Contacts: b.Contacts,
				Features: b.Features, Configuration: b.Configuration,
			})
			if err != nil {
				return nil, err
			}
			return s.startServiceChange(ctx, svc, u, scope)
		})
	register(s, huma.Operation{OperationID: "delete-internet-service", Method: http.MethodDelete, Path: "/services/connectivity/internet/{service_id}",
		Summary: "Decommission an internet service", Tags: tags, DefaultStatus: http.StatusAccepted,
		Description: "Decommissions an internet service now, without data migration (as DELETE /services/{service_id}): a decommission " +
			"operation (dec_), answered 202. Another kind's id is 404."},
		access{permission: "services:write"}, func(ctx context.Context, in *ServicePath) (*OperationAcceptedOutput, error) {
			p := principal(ctx)
			if _, err := s.services.ServiceOfKind(ctx, p, catalog.KindInternet, in.ServiceID); err != nil {
				return nil, err
			}
			return s.decommission(ctx, in.ServiceID, services.DecommissionInput{Reason: "deleted"})
		})
}

// decommission validates and starts the decommission of a service.
func (s *Server) decommission(ctx context.Context, id string, in services.DecommissionInput) (*OperationAcceptedOutput, error) {
	svc, plan, scope, err := s.services.PrepareDecommission(ctx, principal(ctx), id, in)
	if err != nil {
		return nil, err
	}
	return s.startDecommission(ctx, svc, plan, scope)
}
