package api

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/services"
	"github.com/telcoplatform/platform/models/telemetry"
	"github.com/telcoplatform/platform/rowversion"
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

// ServiceContactsItem are the service's contacts.
type ServiceContactsItem struct {
	Technical string `json:"technical,omitempty"`
	Billing   string `json:"billing,omitempty"`
}

// ServicePricingItem is what the service costs, and whether it is billed.
type ServicePricingItem struct {
	MonthlyCharge  models.Money `json:"monthly_charge" example:"374.00"`
	OneTimeCharge  models.Money `json:"one_time_charge" example:"500.00"`
	Currency       string       `json:"currency" example:"USD"`
	TermMonths     int          `json:"term_months" example:"12"`
	QuoteID        string       `json:"quote_id,omitempty"`
	BillingEndedAt *string      `json:"billing_ended_at" doc:"When billing stopped (decommission); null while billed"`
}

// MaintenanceWindowItem is a scheduled maintenance window.
type MaintenanceWindowItem struct {
	_     struct{} `nullable:"true"` // answered as null where there is none
	Start string   `json:"start"`
	End   string   `json:"end"`
}

// ServiceItem is a service record.
type ServiceItem struct {
	ID                    string                 `json:"id" example:"svc_3fK9aZ"`
	Name                  string                 `json:"name"`
	Type                  string                 `json:"type" example:"internet" doc:"The kind: internet, network, phone_system, contact_center, cloud_infrastructure, cloud_platform, managed_security, security_infrastructure or ai_platform"`
	ServiceType           string                 `json:"service_type" example:"fiber_dedicated"`
	CatalogServiceID      string                 `json:"catalog_service_id" example:"internet-fiber-dedicated"`
	Template              string                 `json:"template,omitempty"`
	Status                string                 `json:"status" enum:"pending,provisioning,operational,degraded,down,maintenance,decommissioning,decommissioned,failed"`
	AccountID             string                 `json:"account_id"`
	Bandwidth             string                 `json:"bandwidth" example:"1gbps"`
	Quantity              int                    `json:"quantity" doc:"Billing units: users, agents, sites, devices, virtual machines, environments or models (1 otherwise)"`
	SLA                   string                 `json:"sla" example:"premium"`
	BillingCycle          string                 `json:"billing_cycle" example:"monthly"`
	Redundancy            string                 `json:"redundancy,omitempty"`
	Monitoring            string                 `json:"monitoring,omitempty"`
	Features              []string               `json:"features"`
	Configuration         map[string]any         `json:"configuration" doc:"Settings of PUT /services/{service_id}/configuration"`
	Specification         map[string]any         `json:"specification" doc:"The create body of its kind, as ordered"`
	Resources             map[string]any         `json:"resources" doc:"What the network built: phone_numbers, instances, load_balancers, environments, endpoints, sites, pbx..."`
	Location              ServiceLocation        `json:"location"`
	Network               ServiceNetwork         `json:"network"`
	Contacts              ServiceContactsItem    `json:"contacts"`
	Pricing               ServicePricingItem     `json:"pricing"`
	MaintenanceWindow     *MaintenanceWindowItem `json:"maintenance_window" doc:"The scheduled (or current) maintenance window; null when none"`
	PendingOperationID    *string                `json:"pending_operation_id" nullable:"true" doc:"The change, scaling or decommission under way; null when none"`
	ProvisioningRequestID string                 `json:"provisioning_request_id" example:"prov_3fK9aZ"`
	CreatedAt             string                 `json:"created_at"`
	UpdatedAt             string                 `json:"updated_at"`
	ActivatedAt           *string                `json:"activated_at"`
	StatusChangedAt       string                 `json:"status_changed_at"`
	DecommissionedAt      *string                `json:"decommissioned_at"`
	DecommissionReason    *string                `json:"decommission_reason" nullable:"true" doc:"Why the service was decommissioned; null until it is"`
}

func orEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

func serviceItem(svc *services.Service) ServiceItem {
	it := ServiceItem{
		ID: svc.ID, Name: svc.Name, Type: svc.Kind, ServiceType: svc.ServiceType, CatalogServiceID: svc.CatalogServiceID,
		Template: svc.TemplateID, Status: string(svc.Status), AccountID: svc.AccountID, Bandwidth: svc.Bandwidth, Quantity: max(svc.Quantity, 1), SLA: svc.SLA,
		BillingCycle: svc.BillingCycle, Redundancy: svc.Redundancy, Monitoring: svc.Monitoring,
		Features: nonNil(svc.Features), Configuration: orEmpty(svc.Configuration), Specification: orEmpty(svc.Spec), Resources: orEmpty(svc.Resources),
		Location:              ServiceLocation{LocationID: svc.LocationID, Address: svc.Address, City: svc.City, State: svc.State, Zip: svc.Zip},
		Network:               ServiceNetwork{IPBlock: svc.IPBlock, Gateway: svc.Gateway, VLANID: svc.VLANID, CircuitID: svc.CircuitID},
		Contacts:              ServiceContactsItem{Technical: svc.TechnicalContact, Billing: svc.BillingContact},
		Pricing:               ServicePricingItem{MonthlyCharge: svc.MonthlyCharge, OneTimeCharge: svc.OneTimeCharge, Currency: svc.Currency, TermMonths: max(svc.TermMonths, 1), QuoteID: svc.QuoteID, BillingEndedAt: optTimestamp(svc.BillingEndedAt)},
		PendingOperationID:    strPtr(svc.PendingOperationID),
		ProvisioningRequestID: svc.OperationID, CreatedAt: models.Timestamp(svc.CreatedAt), UpdatedAt: models.Timestamp(svc.UpdatedAt),
		ActivatedAt: optTimestamp(svc.ActivatedAt), StatusChangedAt: models.Timestamp(svc.StatusChangedAt),
		DecommissionedAt: optTimestamp(svc.DecommissionedAt), DecommissionReason: strPtr(svc.DecommissionReason),
	}
	if svc.MaintenanceStartsAt != nil && svc.MaintenanceEndsAt != nil {
		it.MaintenanceWindow = &MaintenanceWindowItem{Start: models.Timestamp(*svc.MaintenanceStartsAt), End: models.Timestamp(*svc.MaintenanceEndsAt)}
	}
	return it
}

// ServiceOutput wraps one service.
type ServiceOutput struct {
	Body struct {
		Envelope
		Service    ServiceItem `json:"service"`
		preEncoded             // GET /v1/services/{id}: encoded once per snapshot of the row (serviceAnswer)
	}
}

// serviceAnswer is GET /v1/services/{id}'s answer: the service's row is
// read on every request, and when it is unchanged since the last read
// (same snapshot) the answer encoded then is written again.
func (s *Server) serviceAnswer(ctx context.Context, id string) (*ServiceOutput, error) {
	prev := s.serviceAnswers.get(id)
	snap, err := s.services.ServiceSnapshot(ctx, principal(ctx), id, prev.snapshot(), rowVersionOf(ctx, rowversion.Services))
	if err != nil {
		return nil, err
	}
	out := &ServiceOutput{}
	if err := s.serviceAnswers.serve(id, prev, snap, &out.Body.Service, &out.Body.preEncoded, &out.Body, serviceItem); err != nil {
		return nil, err
	}
	return out, nil
}

// PerformanceMetricsItem are a service's recent performance.
type PerformanceMetricsItem struct {
	_                    struct{} `nullable:"true"` // answered as null where there is none
	LatencyMs            float64  `json:"latency_ms" example:"12.5"`
	BandwidthUtilization float64  `json:"bandwidth_utilization" example:"45.2" doc:"Percent of the service's bandwidth in use"`
	PacketLoss           float64  `json:"packet_loss" example:"0.01" doc:"Percent of packets lost"`
	JitterMs             float64  `json:"jitter_ms" example:"1.2"`
}

// HealthChecksItem are a service's health checks.
type HealthChecksItem struct {
	Connectivity string `json:"connectivity" enum:"healthy,degraded,unhealthy,unknown"`
	Performance  string `json:"performance" enum:"healthy,degraded,unhealthy,unknown"`
	Security     string `json:"security" enum:"healthy,warning,unknown"`
}

// ServiceStatusOutput is the status response, computed from the
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

// ServicePath is the path parameter of the /services/{service_id} routes.
type ServicePath struct {
	ServiceID string `path:"service_id" maxLength:"64" example:"svc_3fK9aZ"`
}

// ServiceFilterParams are the filters of the service lists (DECISIONS 2's
// plain filters; spec 4's search with fields).
type ServiceFilterParams struct {
	Status    string `query:"status" maxLength:"200" example:"operational,degraded" doc:"Comma-separated statuses"`
	Location  string `query:"location" maxLength:"100" example:"loc_austin_congress" doc:"A location id, a ZIP code, a two-letter state code, or a city"`
	AccountID string `query:"account_id" maxLength:"64" doc:"A billing account"`
	Search    string `query:"search" maxLength:"100" doc:"Text to look for (case-insensitive) in the fields"`
	Fields    string `query:"fields" maxLength:"200" example:"name,city" doc:"Comma-separated fields search looks in: name, id, service_type, type, address, city, state, zip, location_id, account_id, circuit_id (default name, id, service_type, address, city)"`
	DateFrom  string `query:"date_from" maxLength:"40" example:"2026-11-01" doc:"Created at or after (RFC 3339 or YYYY-MM-DD)"`
	DateTo    string `query:"date_to" maxLength:"40" doc:"Created at or before (RFC 3339 or YYYY-MM-DD, the whole day)"`
	Filter    string `query:"filter" maxLength:"2000" doc:"A filter expression (docs/filtering.md) over status, type (the kind), service_type, name and city (~ contains), account_id, location_id, state, zip, sla, bandwidth_mbps, monthly_charge (money), created_at, updated_at, status_changed_at and activated_at (null until activated); combined with the other filters by and. A malformed one is 400 VALIDATION_ERROR with details.position, the 0-based character offset of the fault" example:"status in (operational, degraded) and bandwidth_mbps >= 1000"`
}

// serviceListInput is the query of GET /services.
type serviceListInput struct {
	ListParams
	ServiceFilterParams
	Type string `query:"type" maxLength:"200" example:"internet,phone_system" doc:"Comma-separated kinds or service types"`
}

// parseDate reads an RFC 3339 time or a YYYY-MM-DD date (its start, or its
// end when end is set). Errors: VALIDATION_ERROR naming field.
func parseDate(field, s string, end bool) (*time.Time, error) {
	if s == "" {
		return nil, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		t = t.UTC()
		return &t, nil
	}
	t, err := time.Parse("2006-01-02", s)
	if err != nil {
		return nil, models.Invalid(models.FieldIssue{Field: field, Issue: "must be an RFC 3339 time or a date YYYY-MM-DD"})
	}
	if end {
		t = t.Add(24*time.Hour - time.Microsecond)
	}
	return &t, nil
}

// ServicesOutput is a page of services.
type ServicesOutput struct {
	Body struct {
		Envelope
		Services   []ServiceItem `json:"services"`
		Pagination Pagination    `json:"pagination"`
	}
}

// listServices answers a service list, restricted to kind when not "".
func (s *Server) listServices(ctx context.Context, lp ListParams, f ServiceFilterParams, kind string, types ...string) (*ServicesOutput, error) {
	page, err := lp.page()
	if err != nil {
		return nil, err
	}
	from, err := parseDate("date_from", f.DateFrom, false)
	if err != nil {
		return nil, err
	}
	to, err := parseDate("date_to", f.DateTo, true)
	if err != nil {
		return nil, err
	}
	svcs, total, err := s.services.ListServices(ctx, principal(ctx), services.ServiceFilter{
		Kind: kind, Statuses: splitList(f.Status), Types: types, Location: f.Location, AccountID: f.AccountID,
		Search: f.Search, Fields: splitList(f.Fields), CreatedFrom: from, CreatedTo: to, Expr: f.Filter,
	}, page)
	if err != nil {
		return nil, err
	}
	out := &ServicesOutput{}
	out.Body.Services = mapSlice(svcs, serviceItem)
	out.Body.Pagination = newPagination(page, total)
	return out, nil
}

// ServiceUpdateBody changes a service (PUT /services/{service_id}, the
// overview's "update configuration"): any of the fields; the others stay.
type ServiceUpdateBody struct {
	Name          string                  `json:"name,omitempty" maxLength:"200"`
	SLA           string                  `json:"sla,omitempty" maxLength:"20" example:"premium" doc:"One of the offer's SLA options"`
	Contacts      *services.OrderContacts `json:"contacts,omitempty"`
	Features      *[]string               `json:"features,omitempty" maxItems:"20" doc:"Replaces the features (the kind's, docs/services.md)"`
	Configuration map[string]any          `json:"configuration,omitempty" doc:"Settings to set (null removes one), as the component ServiceConfiguration_<kind> states; see PUT /services/{service_id}/configuration"`
}

// FeaturesBody replaces a service's features (PUT /services/{service_id}/features).
type FeaturesBody struct {
	Features []string `json:"features" required:"true" maxItems:"20" doc:"Required: the service's features after the change (the kind's, docs/services.md); [] removes all"`
}

// MaintenanceWindowBody is the scale request's maintenance_window.
type MaintenanceWindowBody struct {
	Start    *time.Time `json:"start,omitempty" required:"true" doc:"Required: when it starts (RFC 3339; past means now)"`
	Duration string     `json:"duration,omitempty" required:"true" maxLength:"20" example:"2_hours" doc:"Required: <n>_hours, 1 to 24"`
}

// ScaleBody is the scale request, plus new_quantity for the
// kinds that scale in users or agents.
type ScaleBody struct {
	ScalingAction     string                 `json:"scaling_action" required:"true" enum:"scale_up,scale_down" maxLength:"20" example:"scale_up" doc:"Required: scale_up or scale_down"`
	NewBandwidth      string                 `json:"new_bandwidth,omitempty" maxLength:"20" example:"10gbps" doc:"internet, network, security_infrastructure: required, the bandwidth (throughput) after scaling"`
	NewQuantity       int                    `json:"new_quantity,omitempty" minimum:"0" maximum:"10000" doc:"phone_system (users), contact_center (agents): required, the number after scaling"`
	EffectiveDate     *time.Time             `json:"effective_date,omitempty" doc:"When the change is applied; within the maintenance window"`
	MaintenanceWindow *MaintenanceWindowBody `json:"maintenance_window,omitempty" doc:"Default: one hour from effective_date (or now)"`
}

// DataMigrationBody is the decommission request's data_migration.
type DataMigrationBody struct {
	Required     bool   `json:"required,omitempty"`
	Destination  string `json:"destination,omitempty" maxLength:"64" example:"svc_3fK9aZ" doc:"The service that receives the data: same organization and kind, in service"`
	Verification bool   `json:"verification,omitempty" doc:"Verify the copy (checksums) before the service is taken out"`
}

// DecommissionBody is the decommission request.
type DecommissionBody struct {
	DecommissionDate *time.Time         `json:"decommission_date,omitempty" doc:"When to take the service out (within 365 days); now when omitted or past"`
	DataMigration    *DataMigrationBody `json:"data_migration,omitempty"`
	Reason           string             `json:"reason,omitempty" maxLength:"500"`
}

// MetricPointItem is one bucket of a service's metrics.
type MetricPointItem struct {
	Timestamp            string   `json:"timestamp" doc:"Start of the bucket"`
	Samples              int      `json:"samples"`
	UptimePercentage     *float64 `json:"uptime_percentage"`
	LatencyMs            *float64 `json:"latency_ms"`
	JitterMs             *float64 `json:"jitter_ms"`
	PacketLoss           *float64 `json:"packet_loss" doc:"Percent"`
	BandwidthUtilization *float64 `json:"bandwidth_utilization" doc:"Percent"`
	ThroughputMbps       *float64 `json:"throughput_mbps"`
	PeakThroughputMbps   *float64 `json:"peak_throughput_mbps"`
	DataTransferredMB    float64  `json:"data_transferred_mb"`
	Calls                int      `json:"calls"`
	CallQuality          *float64 `json:"call_quality" doc:"Mean opinion score, 1 to 5"`
	SecurityAlerts       int      `json:"security_alerts"`
}

// ServiceMetricsOutput is a service's time series.
type ServiceMetricsOutput struct {
	Body struct {
		Envelope
		ServiceID string            `json:"service_id"`
		Period    string            `json:"period" example:"24h"`
		Interval  string            `json:"interval" example:"1h0m0s" doc:"Width of each bucket"`
		From      string            `json:"from"`
		To        string            `json:"to"`
		Metrics   []MetricPointItem `json:"metrics"`
	}
}

// HealthCheckItem is one health check.
type HealthCheckItem struct {
	Name     string         `json:"name" example:"connectivity"`
	Status   string         `json:"status" enum:"healthy,warning,degraded,unhealthy,unknown"`
	Observed map[string]any `json:"observed"`
	Target   map[string]any `json:"target"`
	Message  string         `json:"message"`
}

// IncidentItem is an incident of a service.
type IncidentItem struct {
	_         struct{}       `nullable:"true"` // answered as null where there is none
	ID        string         `json:"id" example:"inc_3fK9aZ"`
	Kind      string         `json:"kind" enum:"down,degraded"`
	Cause     string         `json:"cause"`
	StartedAt string         `json:"started_at"`
	Metrics   map[string]any `json:"metrics"`
}

// ServiceHealthOutput is a service's health.
type ServiceHealthOutput struct {
	Body struct {
		Envelope
		ServiceID    string            `json:"service_id"`
		Status       string            `json:"status"`
		Overall      string            `json:"overall" enum:"healthy,warning,degraded,unhealthy,unknown" doc:"The worst of the checks"`
		CheckedAt    string            `json:"checked_at"`
		LastSampleAt *string           `json:"last_sample_at"`
		Checks       []HealthCheckItem `json:"checks"`
		OpenIncident *IncidentItem     `json:"open_incident"`
	}
}

// UsageMetricsItem is the analytics response's usage_metrics; a figure
// without a sample to compute it from is null.
type UsageMetricsItem struct {
	TotalDataTransferred string   `json:"total_data_transferred" example:"1.25 TB"`
	PeakBandwidthUsage   *string  `json:"peak_bandwidth_usage" example:"850.0 Mbps" doc:"The highest throughput sampled; null without telemetry in the period"`
	AverageLatency       *string  `json:"average_latency" example:"12.5 ms" doc:"Average over the samples in which the service was up; null without one"`
	TotalCalls           int64    `json:"total_calls"`
	CallQualityScore     *float64 `json:"call_quality_score" doc:"Mean opinion score of the calls, 1 to 5; null without calls (always for kinds that carry no calls)"`
	UptimePercentage     *float64 `json:"uptime_percentage" doc:"Share of the period's samples in which the service was up; null without telemetry"`
}

// CostAnalysisItem is the analytics response's cost_analysis.
type CostAnalysisItem struct {
	TotalCost             models.Money `json:"total_cost" doc:"The monthly charge prorated over the days of the period the service was billed"`
	CostPerGB             models.Money `json:"cost_per_gb"`
	OptimizationPotential models.Money `json:"optimization_potential" doc:"Monthly saving of the smallest bandwidth option covering 125 % of the peak"`
	Currency              string       `json:"currency"`
	RecommendedBandwidth  string       `json:"recommended_bandwidth,omitempty"`
}

// TrendsItem is the analytics response's trends, in percent; a trend
// with nothing to compare is null, never 0 (which would claim no change).
type TrendsItem struct {
	UsageGrowth            *float64 `json:"usage_growth" doc:"Data transferred in the period's second half against its first, percent; null when the first half moved no data (growth from nothing has no rate)"`
	PerformanceImprovement *float64 `json:"performance_improvement" doc:"Average latency drop of the second half against the first, percent; null unless both halves have a sample in which the service was up"`
}

// ServiceAnalyticsOutput is the analytics response.
type ServiceAnalyticsOutput struct {
	Body struct {
		Envelope
		ServiceID    string           `json:"service_id"`
		Period       string           `json:"period" example:"last_30_days"`
		From         string           `json:"from"`
		To           string           `json:"to"`
		UsageMetrics UsageMetricsItem `json:"usage_metrics"`
		CostAnalysis CostAnalysisItem `json:"cost_analysis"`
		Trends       TrendsItem       `json:"trends"`
	}
}

// SummaryOutput is the analytics summary of the organization's services.
type SummaryOutput struct {
	Body struct {
		Envelope
		Period   string `json:"period"`
		From     string `json:"from"`
		To       string `json:"to"`
		Services struct {
			Total    int64            `json:"total"`
			ByStatus map[string]int64 `json:"by_status"`
			ByType   map[string]int64 `json:"by_type"`
		} `json:"services"`
		Availability struct {
			UptimePercentage *float64 `json:"uptime_percentage"`
		} `json:"availability"`
		Performance struct {
			AverageLatencyMs float64 `json:"average_latency_ms"`
		} `json:"performance"`
		Usage struct {
			DataTransferredMB    float64 `json:"data_transferred_mb"`
			TotalDataTransferred string  `json:"total_data_transferred"`
			TotalCalls           int64   `json:"total_calls"`
		} `json:"usage"`
		Incidents struct {
			InPeriod int64 `json:"in_period"`
			Open     int64 `json:"open"`
		} `json:"incidents"`
		Cost struct {
			MonthlyRecurring models.Money `json:"monthly_recurring" doc:"Sum of the monthly charges of the services billed now"`
			Currency         string       `json:"currency"`
		} `json:"cost"`
	}
}

// PeriodQuery is the period of metrics and analytics.
type PeriodQuery struct {
	Period string `query:"period" maxLength:"20" example:"24h" doc:"1h, 24h, 7d or 30d (or last_hour, last_24_hours, last_7_days, last_30_days)"`
}

// formatMB writes an amount of data in decimal units: "850.3 MB", "1.25 GB", "3.4 TB".
func formatMB(mb float64) string {
	switch {
	case mb >= 1_000_000:
		return strconv.FormatFloat(mb/1_000_000, 'f', 2, 64) + " TB"
	case mb >= 1000:
		return strconv.FormatFloat(mb/1000, 'f', 2, 64) + " GB"
	}
	return strconv.FormatFloat(mb, 'f', 1, 64) + " MB"
}

// formatMbps writes a rate: "850 Mbps", "1.2 Gbps".
func formatMbps(v float64) string {
	if v >= 1000 {
		return strconv.FormatFloat(v/1000, 'f', 2, 64) + " Gbps"
	}
	return strconv.FormatFloat(v, 'f', 1, 64) + " Mbps"
}

// registerServices registers the /services/{service_id} routes, and the
// overview's GET /services: call it after every fixed /services/... path,
// since Fiber takes the first route that matches.
func (s *Server) registerServices() {
	tags := []string{"Services"}
	changeErrors := " 409 INVALID_STATE_TRANSITION when the service is not delivered (pending, provisioning, decommissioning, " +
		"decommissioned, failed); 409 SERVICE_CONFLICT while another change or decommission runs; 503 SERVICE_MAINTENANCE with " +
		"Retry-After (the window's end) while it is in maintenance. Answers 202 with the operation (docs/operations.md)."
	register(s, huma.Operation{OperationID: "get-services-summary", Method: http.MethodGet, Path: "/services/analytics/summary",
		Summary: "Analytics summary of the organization's services", Tags: []string{"Services: analytics"},
		Description: "Counts by status and kind, availability, average latency, data transferred and calls over the period, incidents " +
			"and monthly recurring charges, computed from the services, their telemetry and incidents."},
		access{permission: "services:read"}, func(ctx context.Context, in *PeriodQuery) (*SummaryOutput, error) {
			period, err := telemetry.ParseMetricsPeriod(orDefaultStr(in.Period, "30d"))
			if err != nil {
				return nil, err
			}
			sum, err := s.telemetry.SummarizeServices(ctx, principal(ctx), period, s.now())
			if err != nil {
				return nil, err
			}
			out := &SummaryOutput{}
			b := &out.Body
			b.Period, b.From, b.To = orDefaultStr(in.Period, "30d"), models.Timestamp(sum.From), models.Timestamp(sum.To)
			b.Services.Total, b.Services.ByStatus, b.Services.ByType = sum.Total, sum.ByStatus, sum.ByType
			b.Availability.UptimePercentage = sum.UptimePercentage
			b.Performance.AverageLatencyMs = sum.AverageLatencyMs
			b.Usage.DataTransferredMB, b.Usage.TotalDataTransferred, b.Usage.TotalCalls = sum.DataTransferredMB, formatMB(sum.DataTransferredMB), sum.TotalCalls
			b.Incidents.InPeriod, b.Incidents.Open = sum.Incidents, sum.OpenIncidents
			b.Cost.MonthlyRecurring, b.Cost.Currency = sum.MonthlyRecurring, sum.Currency
			return out, nil
		})
	register(s, huma.Operation{OperationID: "list-services", Method: http.MethodGet, Path: "/services",
		Summary: "List services", Tags: tags,
		Description: "The organization's services of every kind. Filters: status, type (kinds or service types), location, account_id, " +
			"date_from, date_to; search with fields; sort=field:asc|desc (created_at, updated_at, name, status, type, service_type, " +
			"monthly_charge, status_changed_at); limit with offset, page or cursor. " +
			"filter= takes an expression of the filter language (docs/filtering.md)."},
		access{permission: "services:read"}, func(ctx context.Context, in *serviceListInput) (*ServicesOutput, error) {
			return s.listServices(ctx, in.ListParams, in.ServiceFilterParams, "", splitList(in.Type)...)
		})
	register(s, huma.Operation{OperationID: "get-service-status", Method: http.MethodGet, Path: "/services/{service_id}/status",
		Summary: "Service status", Tags: tags,
		Description: "Status, uptime, last incident, performance and health checks, computed from the telemetry the network records for the service. See docs/provisioning.md."},
		access{permission: "services:read"}, func(ctx context.Context, in *ServicePath) (*ServiceStatusOutput, error) {
			r, err := s.telemetry.StatusReport(ctx, principal(ctx), in.ServiceID, s.now())
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
	register(s, huma.Operation{OperationID: "get-service-metrics", Method: http.MethodGet, Path: "/services/{service_id}/metrics",
		Summary: "Service metrics (time series)", Tags: tags,
		Description: "The service's telemetry over `period` in buckets (5 minutes for 1h, 1 hour for 24h, 6 hours for 7d, 1 day for 30d), " +
			"oldest first, empty buckets included: averages over the samples in which it was up, totals of data and calls."},
		access{permission: "services:read"}, func(ctx context.Context, in *struct {
			ServicePath
			PeriodQuery
		}) (*ServiceMetricsOutput, error) {
			period, err := telemetry.ParseMetricsPeriod(in.Period)
			if err != nil {
				return nil, err
			}
			m, err := s.telemetry.ServiceMetrics(ctx, principal(ctx), in.ServiceID, period, s.now())
			if err != nil {
				return nil, err
			}
			out := &ServiceMetricsOutput{}
			b := &out.Body
			b.ServiceID, b.Period, b.Interval = m.Service.ID, orDefaultStr(in.Period, "24h"), period.Bucket.String()
			b.From, b.To = models.Timestamp(m.From), models.Timestamp(m.To)
			b.Metrics = mapSlice(m.Points, func(pt *telemetry.MetricPoint) MetricPointItem {
				return MetricPointItem{Timestamp: models.Timestamp(pt.Start), Samples: pt.Samples, UptimePercentage: pt.UptimePercentage,
					LatencyMs: pt.LatencyMs, JitterMs: pt.JitterMs, PacketLoss: pt.PacketLoss, BandwidthUtilization: pt.Utilization,
					ThroughputMbps: pt.ThroughputMbps, PeakThroughputMbps: pt.PeakThroughputMbps, DataTransferredMB: pt.DataTransferredMB,
					Calls: pt.Calls, CallQuality: pt.CallQuality, SecurityAlerts: pt.SecurityAlerts}
			})
			return out, nil
		})
	register(s, huma.Operation{OperationID: "get-service-health", Method: http.MethodGet, Path: "/services/{service_id}/health",
		Summary: "Service health", Tags: tags,
		Description: "Health checks computed from the telemetry: connectivity, performance, security, availability (uptime against the " +
			"SLA's target) and, for voice, call quality; each with what was observed and the target; overall is the worst."},
		access{permission: "services:read"}, func(ctx context.Context, in *ServicePath) (*ServiceHealthOutput, error) {
			h, err := s.telemetry.ServiceHealthReport(ctx, principal(ctx), in.ServiceID, s.now())
			if err != nil {
				return nil, err
			}
			out := &ServiceHealthOutput{}
			b := &out.Body
			b.ServiceID, b.Status, b.Overall, b.CheckedAt = h.Service.ID, string(h.Service.Status), h.Overall, models.Timestamp(s.now())
			b.LastSampleAt = optTimestamp(h.LastSampleAt)
			b.Checks = mapSlice(h.Checks, func(c *telemetry.HealthCheck) HealthCheckItem {
				return HealthCheckItem{Name: c.Name, Status: c.Status, Observed: orEmpty(c.Observed), Target: orEmpty(c.Target), Message: c.Message}
			})
			if inc := h.OpenIncident; inc != nil {
				b.OpenIncident = &IncidentItem{ID: inc.ID, Kind: inc.Kind, Cause: inc.Cause, StartedAt: models.Timestamp(inc.StartedAt), Metrics: orEmpty(inc.Metrics)}
			}
			return out, nil
		})
	register(s, huma.Operation{OperationID: "get-service-analytics", Method: http.MethodGet, Path: "/services/{service_id}/analytics",
		Summary: "Service analytics", Tags: []string{"Services: analytics"},
		Description: "The analytics response over `period` (default last_30_days): usage, cost (prorated charges, per GB, " +
			"the saving of a smaller bandwidth) and trends (second half of the period against the first), computed from telemetry and price."},
		access{permission: "services:read"}, func(ctx context.Context, in *struct {
			ServicePath
			PeriodQuery
		}) (*ServiceAnalyticsOutput, error) {
			name := orDefaultStr(in.Period, "last_30_days")
			period, err := telemetry.ParseMetricsPeriod(name)
			if err != nil {
				return nil, err
			}
			a, err := s.telemetry.ServiceAnalyticsFor(ctx, principal(ctx), in.ServiceID, period, s.now())
			if err != nil {
				return nil, err
			}
			out := &ServiceAnalyticsOutput{}
			b := &out.Body
			b.ServiceID, b.Period, b.From, b.To = a.Service.ID, name, models.Timestamp(a.From), models.Timestamp(a.To)
			b.UsageMetrics = UsageMetricsItem{TotalDataTransferred: formatMB(a.DataTransferredMB), TotalCalls: a.TotalCalls, CallQualityScore: a.CallQuality,
				UptimePercentage: a.UptimePercentage}
			if v := a.PeakThroughputMbps; v != nil {
				b.UsageMetrics.PeakBandwidthUsage = new(formatMbps(*v))
			}
			if v := a.AverageLatencyMs; v != nil {
				b.UsageMetrics.AverageLatency = new(strconv.FormatFloat(*v, 'f', -1, 64) + " ms")
			}
			b.CostAnalysis = CostAnalysisItem{TotalCost: a.TotalCost, CostPerGB: a.CostPerGB, OptimizationPotential: a.OptimizationSavings, Currency: a.Currency,
				RecommendedBandwidth: a.RecommendedBandwidth}
			b.Trends = TrendsItem{UsageGrowth: a.UsageGrowth, PerformanceImprovement: a.PerformanceImprove}
			return out, nil
		})
	register(s, huma.Operation{OperationID: "get-service", Method: http.MethodGet, Path: "/services/{service_id}",
		Summary: "Get a service", Tags: tags},
		access{permission: "services:read"}, func(ctx context.Context, in *ServicePath) (*ServiceOutput, error) {
			return s.serviceAnswer(ctx, in.ServiceID)
		})
	change := func(ctx context.Context, id string, in services.ServiceUpdateInput) (*OperationAcceptedOutput, error) {
		svc, u, scope, err := s.services.PrepareServiceUpdate(ctx, principal(ctx), id, in)
		if err != nil {
			return nil, err
		}
		return s.startServiceChange(ctx, svc, u, scope)
	}
	register(s, huma.Operation{OperationID: "update-service", Method: http.MethodPut, Path: "/services/{service_id}",
		Summary: "Change a service", Tags: tags, DefaultStatus: http.StatusAccepted,
		Description: "Changes the name, SLA, contacts, features or configuration of a service of any kind: a modification operation " +
			"(mod_) that applies the change (service.modified)." + changeErrors},
		access{permission: "services:write"}, func(ctx context.Context, in *struct {
			ServicePath
			Body ServiceUpdateBody
		}) (*OperationAcceptedOutput, error) {
			b := in.Body
			return change(ctx, in.ServiceID, services.ServiceUpdateInput{Name: strPtr(strings.TrimSpace(b.Name)), SLA: strPtr(b.SLA),
				Contacts: b.Contacts, Features: b.Features, Configuration: b.Configuration})
		})
	register(s, huma.Operation{OperationID: "configure-service", Method: http.MethodPut, Path: "/services/{service_id}/configuration",
		Summary: "Change a service's configuration", Tags: tags, DefaultStatus: http.StatusAccepted,
		Description: "The body is the settings to set, as an object of at least one setting (a null value removes one); each kind has its settings, with the JSON Schema of the component ServiceConfiguration_<kind> " +
			"(docs/services.md), e.g. dns_servers, qos_profile, routed_prefixes for internet. A modification operation (mod_)." + changeErrors},
		access{permission: "services:write"}, func(ctx context.Context, in *struct {
			ServicePath
			Body map[string]any
		}) (*OperationAcceptedOutput, error) {
			cfg := in.Body
			if cfg == nil {
				cfg = map[string]any{}
			}
			return change(ctx, in.ServiceID, services.ServiceUpdateInput{Configuration: cfg})
		})
	register(s, huma.Operation{OperationID: "set-service-features", Method: http.MethodPut, Path: "/services/{service_id}/features",
		Summary: "Change a service's features", Tags: tags, DefaultStatus: http.StatusAccepted,
		Description: "Replaces the service's features with those listed (each kind has its own, docs/services.md); the price follows. " +
			"A modification operation (mod_)." + changeErrors},
		access{permission: "services:write"}, func(ctx context.Context, in *struct {
			ServicePath
			Body FeaturesBody
		}) (*OperationAcceptedOutput, error) {
			feats := in.Body.Features
			if feats == nil {
				feats = []string{}
			}
			return change(ctx, in.ServiceID, services.ServiceUpdateInput{Features: &feats})
		})
	register(s, huma.Operation{OperationID: "scale-service", Method: http.MethodPut, Path: "/services/{service_id}/scaling",
		Summary: "Scale a service", Tags: tags, DefaultStatus: http.StatusAccepted,
		Description: "The scale request: a scaling operation (scl_) that records the maintenance window " +
			"(service.maintenance_scheduled), waits for it with a durable timer, puts the service in maintenance, applies the new " +
			"bandwidth (or number of users or agents) at the effective date (service.modified) and ends the maintenance at the " +
			"window's end. 422 INSUFFICIENT_BANDWIDTH when the sites cannot carry the new bandwidth." + changeErrors},
		access{permission: "services:write"}, func(ctx context.Context, in *struct {
			ServicePath
			Body ScaleBody
		}) (*OperationAcceptedOutput, error) {
			b := in.Body
			sc := &services.ScalingInput{Action: b.ScalingAction, NewBandwidth: b.NewBandwidth, NewQuantity: b.NewQuantity, EffectiveDate: b.EffectiveDate}
			if w := b.MaintenanceWindow; w != nil {
				sc.Window = &services.MaintenanceWindowInput{Start: w.Start, Duration: w.Duration}
			}
			return change(ctx, in.ServiceID, services.ServiceUpdateInput{Scaling: sc})
		})
	decomDesc := "a decommission operation (dec_) that waits for decommission_date with a durable timer, copies the service's data to " +
		"the destination and verifies it when asked, then deactivates the service, releases its inventory (capacity, IP blocks, " +
		"VLANs, numbers, compute), stops its billing (billing_ended_at) and records it decommissioned (service.decommissioned)."
	register(s, huma.Operation{OperationID: "decommission-service", Method: http.MethodPost, Path: "/services/{service_id}/decommission",
		Summary: "Decommission a service", Tags: tags, DefaultStatus: http.StatusAccepted,
		Description: "The decommission request: " + decomDesc + changeErrors},
		access{permission: "services:write"}, func(ctx context.Context, in *struct {
			ServicePath
			Body DecommissionBody
		}) (*OperationAcceptedOutput, error) {
			b := in.Body
			req := services.DecommissionInput{Date: b.DecommissionDate, Reason: b.Reason}
			if m := b.DataMigration; m != nil {
				req.MigrationRequired, req.Destination, req.Verification = m.Required, m.Destination, m.Verification
			}
			return s.decommission(ctx, in.ServiceID, req)
		})
	register(s, huma.Operation{OperationID: "delete-service", Method: http.MethodDelete, Path: "/services/{service_id}",
		Summary: "Decommission a service now", Tags: tags, DefaultStatus: http.StatusAccepted,
		Description: "Decommissions the service now, without data migration: " + decomDesc + changeErrors},
		access{permission: "services:write"}, func(ctx context.Context, in *ServicePath) (*OperationAcceptedOutput, error) {
			return s.decommission(ctx, in.ServiceID, services.DecommissionInput{Reason: "deleted"})
		})
}

func orDefaultStr(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
