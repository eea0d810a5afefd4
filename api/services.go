package api

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/telcoplatform/platform/models"
)

// ServiceLocation is where a service is delivered.
type ServiceLocation struct {
	LocationID string `json:"location_id" example:"loc_austin_congress"`
	Address    string `json:"address"`
	City       string `json:"city"`
	State      string `json:"state"`
	Zip        string `json:"zip"`
}

// ServiceNetwork is what the network assigned to a service.
type ServiceNetwork struct {
	IPBlock   string `json:"ip_block,omitempty" example:"100.64.0.8/29"`
	Gateway   string `json:"gateway,omitempty" example:"100.64.0.9"`
	VLANID    int    `json:"vlan_id,omitempty" example:"100"`
	CircuitID string `json:"circuit_id,omitempty"`
}

// ServiceItem is a service record.
type ServiceItem struct {
	ID                    string          `json:"id" example:"svc_3fK9aZ"`
	Name                  string          `json:"name"`
	Type                  string          `json:"type" example:"internet"`
	ServiceType           string          `json:"service_type" example:"fiber_dedicated"`
	CatalogServiceID      string          `json:"catalog_service_id" example:"internet-fiber-dedicated"`
	Template              string          `json:"template,omitempty"`
	Status                string          `json:"status" enum:"pending,provisioning,operational,degraded,down,maintenance,decommissioning,decommissioned,failed"`
	AccountID             string          `json:"account_id"`
	Bandwidth             string          `json:"bandwidth" example:"1gbps"`
	SLA                   string          `json:"sla" example:"premium"`
	BillingCycle          string          `json:"billing_cycle" example:"monthly"`
	Redundancy            string          `json:"redundancy,omitempty"`
	Monitoring            string          `json:"monitoring,omitempty"`
	Location              ServiceLocation `json:"location"`
	Network               ServiceNetwork  `json:"network"`
	ProvisioningRequestID string          `json:"provisioning_request_id" example:"prov_3fK9aZ"`
	CreatedAt             string          `json:"created_at"`
	UpdatedAt             string          `json:"updated_at"`
	ActivatedAt           *string         `json:"activated_at"`
	StatusChangedAt       string          `json:"status_changed_at"`
}

func serviceItem(svc *models.Service) ServiceItem {
	return ServiceItem{
		ID: svc.ID, Name: svc.Name, Type: svc.Kind, ServiceType: svc.ServiceType, CatalogServiceID: svc.CatalogServiceID,
		Template: svc.TemplateID, Status: string(svc.Status), AccountID: svc.AccountID, Bandwidth: svc.Bandwidth, SLA: svc.SLA,
		BillingCycle: svc.BillingCycle, Redundancy: svc.Redundancy, Monitoring: svc.Monitoring,
		Location:              ServiceLocation{LocationID: svc.LocationID, Address: svc.Address, City: svc.City, State: svc.State, Zip: svc.Zip},
		Network:               ServiceNetwork{IPBlock: svc.IPBlock, Gateway: svc.Gateway, VLANID: svc.VLANID, CircuitID: svc.CircuitID},
		ProvisioningRequestID: svc.OperationID, CreatedAt: models.Timestamp(svc.CreatedAt), UpdatedAt: models.Timestamp(svc.UpdatedAt),
		ActivatedAt: optTimestamp(svc.ActivatedAt), StatusChangedAt: models.Timestamp(svc.StatusChangedAt),
	}
}

// ServiceOutput wraps one service.
type ServiceOutput struct {
	Body struct {
		Envelope
		Service ServiceItem `json:"service"`
	}
}

// PerformanceMetricsItem are a service's recent performance (spec 2.2).
type PerformanceMetricsItem struct {
	LatencyMs            float64 `json:"latency_ms" example:"12.5"`
	BandwidthUtilization float64 `json:"bandwidth_utilization" example:"45.2" doc:"Percent of the service's bandwidth in use"`
	PacketLoss           float64 `json:"packet_loss" example:"0.01" doc:"Percent of packets lost"`
	JitterMs             float64 `json:"jitter_ms" example:"1.2"`
}

// HealthChecksItem are a service's health checks (spec 2.2).
type HealthChecksItem struct {
	Connectivity string `json:"connectivity" enum:"healthy,degraded,unhealthy,unknown"`
	Performance  string `json:"performance" enum:"healthy,degraded,unhealthy,unknown"`
	Security     string `json:"security" enum:"healthy,warning,unknown"`
}

// ServiceStatusOutput is the status response (spec 2.2), computed from the
// service's telemetry.
type ServiceStatusOutput struct {
	Body struct {
		Envelope
		ServiceID          string                  `json:"service_id" example:"svc_3fK9aZ"`
		Status             string                  `json:"status" example:"operational"`
		UptimePercentage   *float64                `json:"uptime_percentage" example:"99.98" doc:"Share of the last 30 days' samples in which the service was up; null without telemetry"`
		LastIncident       *string                 `json:"last_incident" doc:"Last sample where the service was down or lost more packets than its SLA allows"`
		PerformanceMetrics *PerformanceMetricsItem `json:"performance_metrics" doc:"Averages over the last hour (or the latest sample); null without telemetry"`
		HealthChecks       HealthChecksItem        `json:"health_checks"`
	}
}

type servicePath struct {
	ServiceID string `path:"service_id" maxLength:"64" example:"svc_3fK9aZ"`
}

// registerServices registers the /services/{service_id} routes: call it after
// every fixed /services/... path, since Fiber takes the first route that matches.
func (s *Server) registerServices() {
	tags := []string{"Services"}
	register(s, huma.Operation{OperationID: "get-service-status", Method: http.MethodGet, Path: "/services/{service_id}/status",
		Summary: "Service status", Tags: tags,
		Description: "Status, uptime, last incident, performance and health checks, computed from the telemetry the network records for the service. See docs/provisioning.md."},
		access{permission: "services:read"}, func(ctx context.Context, in *servicePath) (*ServiceStatusOutput, error) {
			r, err := s.store.StatusReport(ctx, principal(ctx), in.ServiceID, s.now())
			if err != nil {
				return nil, err
			}
			out := &ServiceStatusOutput{}
			b := &out.Body
			b.ServiceID, b.Status, b.UptimePercentage = r.Service.ID, string(r.Service.Status), r.UptimePercentage
			b.LastIncident = optTimestamp(r.LastIncident)
			if m := r.Metrics; m != nil {
				b.PerformanceMetrics = &PerformanceMetricsItem{LatencyMs: m.LatencyMs, BandwidthUtilization: m.BandwidthUtilization, PacketLoss: m.PacketLoss, JitterMs: m.JitterMs}
			}
			b.HealthChecks = HealthChecksItem{Connectivity: r.Connectivity, Performance: r.Performance, Security: r.Security}
			return out, nil
		})
	register(s, huma.Operation{OperationID: "get-service", Method: http.MethodGet, Path: "/services/{service_id}",
		Summary: "Get a service", Tags: tags},
		access{permission: "services:read"}, func(ctx context.Context, in *servicePath) (*ServiceOutput, error) {
			svc, err := s.store.GetService(ctx, principal(ctx), in.ServiceID)
			if err != nil {
				return nil, err
			}
			out := &ServiceOutput{}
			out.Body.Service = serviceItem(svc)
			return out, nil
		})
}
