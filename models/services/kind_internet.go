package services

import (
	"strings"

	"github.com/telcoplatform/platform/models/catalog"
)

// InternetBody is the internet service create body (spec 2.1). Its required
// fields are required in the API schema too, so that a client built from the
// OpenAPI document sends them; a body without them is refused with each
// missing field named.
type InternetBody struct {
	AccountID    string                `json:"account_id" required:"true" maxLength:"64" example:"acct_3fK9aZ" doc:"Required: a billing account of the caller's organization"`
	ServiceType  string                `json:"service_type" required:"true" enum:"fiber_dedicated,fiber_business" maxLength:"40" example:"fiber_dedicated" doc:"Required: fiber_dedicated or fiber_business"`
	Bandwidth    string                `json:"bandwidth" required:"true" maxLength:"20" example:"1gbps" doc:"Required: <n>mbps or <n>gbps, lowercase, one of the catalog's options"`
	Location     catalog.LocationInput `json:"location" required:"true" doc:"Required: {address, city, state, zip}"`
	SLA          string                `json:"sla" required:"true" enum:"standard,premium,enterprise" maxLength:"20" example:"premium" doc:"Required: standard, premium or enterprise (as the catalog offers)"`
	BillingCycle string                `json:"billing_cycle,omitempty" enum:"monthly" example:"monthly" doc:"monthly (the default)"`
	OrderExtras
}

// ServiceKind returns internet.
func (b *InternetBody) ServiceKind() string { return catalog.KindInternet }

func (b *InternetBody) prepare(p *orderPrep, o *ProvisioningOrder) error {
	b.OrderExtras.apply(o)
	o.AccountID, o.ServiceType = strings.TrimSpace(b.AccountID), strings.TrimSpace(b.ServiceType)
	o.Bandwidth, o.SLA = strings.TrimSpace(b.Bandwidth), strings.TrimSpace(b.SLA)
	o.BillingCycle = OrDefault(strings.TrimSpace(b.BillingCycle), "monthly")
	o.Location = b.Location.Normalize()
	if !p.quote {
		p.v.Check(o.AccountID != "", "account_id", "is required")
	}
	if st, ok := catalog.LookupServiceType(o.ServiceType); !ok || st.Kind != catalog.KindInternet {
		if p.required(o.ServiceType != "", "service_type") {
			p.v.Add("service_type", "must be one of "+strings.Join(catalog.ServiceTypeNames(catalog.KindInternet), ", "))
		} else {
			o.ServiceType = "fiber_dedicated"
		}
	}
	if p.quote {
		if !p.required(o.Bandwidth != "", "bandwidth") {
			o.Bandwidth = quoteDefaultBandwidth(p, o)
		}
		if !p.required(o.SLA != "", "sla") {
			o.SLA = "standard"
		}
		if b.Location != (catalog.LocationInput{}) {
			o.Location.Validate(p.v, "location")
		} else {
			p.required(false, "location")
		}
		return nil
	}
	o.Location.Validate(p.v, "location")
	return nil
}

// quoteDefaultBandwidth returns the smallest bandwidth the order's offer
// sells (what a quote without a bandwidth is priced at).
func quoteDefaultBandwidth(p *orderPrep, o *ProvisioningOrder) string {
	id := o.CatalogServiceID
	if st, ok := catalog.LookupServiceType(o.ServiceType); ok {
		id = st.CatalogServiceID
	}
	if id == "" {
		id = o.Profile().Offers[0]
	}
	offer, err := p.s.catalog.CatalogServiceByID(p.ctx, id)
	if err != nil || len(offer.BandwidthOptions) == 0 {
		return ""
	}
	return offer.BandwidthOptions[0]
}
