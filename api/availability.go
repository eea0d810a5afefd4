package api

import (
	"context"
	"net/http"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/telcoplatform/platform/models/catalog"
)

// LocationBody is a postal location (spec 2.1, 2.2).
type LocationBody struct {
	Address string `json:"address" required:"true" minLength:"1" maxLength:"200" example:"100 Congress Ave"`
	City    string `json:"city" required:"true" minLength:"1" maxLength:"100" example:"Austin"`
	State   string `json:"state" required:"true" minLength:"2" maxLength:"20" example:"TX" doc:"Two-letter US state or territory code"`
	Zip     string `json:"zip" required:"true" minLength:"5" maxLength:"10" example:"78701" doc:"12345 or 12345-6789"`
}

func (l LocationBody) input() catalog.LocationInput {
	return catalog.LocationInput{Address: l.Address, City: l.City, State: l.State, Zip: l.Zip}
}

// AvailabilityCheckBody is the availability check request.
type AvailabilityCheckBody struct {
	Location              LocationBody `json:"location" required:"true" doc:"Required"`
	ServiceTypes          []string     `json:"service_types,omitempty" maxItems:"20" example:"[\"fiber_dedicated\",\"fiber_business\"]" doc:"Service types of interest; every type offered at the location when omitted"`
	BandwidthRequirements string       `json:"bandwidth_requirements,omitempty" maxLength:"20" example:"500mbps"`
}

// AvailabilityLocation is the serviceable location that matched.
type AvailabilityLocation struct {
	ID      string `json:"location_id" example:"loc_austin_congress"`
	Address string `json:"address"`
	City    string `json:"city"`
	State   string `json:"state"`
	Zip     string `json:"zip"`
}

// ServiceAvailabilityItem is the answer for one service type.
type ServiceAvailabilityItem struct {
	ServiceType      string   `json:"service_type" example:"fiber_dedicated"`
	Kind             string   `json:"kind" example:"internet"`
	CatalogServiceID string   `json:"catalog_service_id" example:"internet-fiber-dedicated"`
	Available        bool     `json:"available"`
	Reason           string   `json:"reason,omitempty" enum:"SERVICE_UNAVAILABLE_AT_LOCATION,INSUFFICIENT_BANDWIDTH" doc:"Why the type is not available"`
	Bandwidth        string   `json:"bandwidth" example:"10gbps" doc:"The largest bandwidth that can be ordered now (empty when none)"`
	BandwidthOptions []string `json:"bandwidth_options" doc:"The catalog's bandwidth options that fit in the capacity left"`
	SLAOptions       []string `json:"sla_options"`
}

// AvailabilityOutput answers an availability check, per service type.
type AvailabilityOutput struct {
	Body struct {
		Envelope
		Location              AvailabilityLocation      `json:"location"`
		Serviceable           bool                      `json:"serviceable"`
		BandwidthRequirements string                    `json:"bandwidth_requirements,omitempty"`
		Services              []ServiceAvailabilityItem `json:"services"`
	}
}

func availabilityOutput(r *catalog.AvailabilityReport, bandwidth string) *AvailabilityOutput {
	out := &AvailabilityOutput{}
	l := r.Location
	out.Body.Location = AvailabilityLocation{ID: l.ID, Address: l.Address, City: l.City, State: l.State, Zip: l.Zip}
	out.Body.Serviceable = true
	out.Body.BandwidthRequirements = bandwidth
	out.Body.Services = mapSlice(r.Services, func(a *catalog.ServiceAvailability) ServiceAvailabilityItem {
		return ServiceAvailabilityItem{
			ServiceType: a.Type.Name, Kind: a.Type.Kind, CatalogServiceID: a.Type.CatalogServiceID, Available: a.Available,
			Reason: string(a.Reason), Bandwidth: a.MaxBandwidth, BandwidthOptions: nonNil(a.BandwidthOptions), SLAOptions: nonNil(a.SLAOptions),
		}
	})
	return out
}

// checkAvailability answers q for the caller's environment: 200 when at least
// one requested type is available, else the error of DECISIONS 3.
func (s *Server) checkAvailability(ctx context.Context, q catalog.AvailabilityQuery) (*AvailabilityOutput, error) {
	report, err := s.catalog.CheckAvailability(ctx, principal(ctx).OwnScope(), q)
	if err != nil {
		return nil, err
	}
	if err := report.Check(); err != nil {
		return nil, err
	}
	return availabilityOutput(report, q.Bandwidth), nil
}

func splitList(s string) []string {
	var out []string
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

func (s *Server) registerAvailability() {
	tags := []string{"Services: availability"}
	desc := "Answers, per service type, whether it can be ordered at the location and with which bandwidth. " +
		"422 LOCATION_NOT_SERVICEABLE when the location is outside the service area; 422 SERVICE_UNAVAILABLE_AT_LOCATION " +
		"(details.alternatives) when none of the requested types is offered there; 422 INSUFFICIENT_BANDWIDTH when they are " +
		"offered but none has the requested bandwidth left. See docs/provisioning.md."
	register(s, huma.Operation{OperationID: "get-availability", Method: http.MethodGet, Path: "/services/availability",
		Summary: "Service availability at a location", Description: desc, Tags: tags},
		access{permission: "services:read"}, func(ctx context.Context, in *struct {
			Address      string `query:"address" maxLength:"200" example:"100 Congress Ave"`
			City         string `query:"city" maxLength:"100" example:"Austin"`
			State        string `query:"state" maxLength:"20" example:"TX"`
			Zip          string `query:"zip" maxLength:"10" example:"78701"`
			LocationID   string `query:"location_id" maxLength:"60" doc:"Instead of the address: a location id from a previous answer"`
			ServiceTypes string `query:"service_types" maxLength:"400" doc:"Comma-separated service types" example:"fiber_dedicated,fiber_business"`
			Bandwidth    string `query:"bandwidth_requirements" maxLength:"20" example:"500mbps"`
		}) (*AvailabilityOutput, error) {
			return s.checkAvailability(ctx, catalog.AvailabilityQuery{
				Location:   catalog.LocationInput{Address: in.Address, City: in.City, State: in.State, Zip: in.Zip},
				LocationID: in.LocationID, ServiceTypes: splitList(in.ServiceTypes), Bandwidth: in.Bandwidth,
			})
		})
	register(s, huma.Operation{OperationID: "check-availability", Method: http.MethodPost, Path: "/services/availability/check",
		Summary: "Check service availability at a location", Description: desc, Tags: tags},
		access{permission: "services:read"}, func(ctx context.Context, in *struct{ Body AvailabilityCheckBody }) (*AvailabilityOutput, error) {
			out, err := s.checkAvailability(ctx, catalog.AvailabilityQuery{
				Location: in.Body.Location.input(), ServiceTypes: in.Body.ServiceTypes, Bandwidth: in.Body.BandwidthRequirements,
			})
			return out, err
		})
}
