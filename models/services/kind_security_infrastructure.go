package services

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/catalog"
)

// SecurityInfrastructureBody is the cybersecurity infrastructure create
// body; the specification shows none, this one is of our design
// (docs/services.md).
type SecurityInfrastructureBody struct {
	AccountID          string                 `json:"account_id,omitempty" maxLength:"64" doc:"Billing account; default: the organization's oldest"`
	InfrastructureType string                 `json:"infrastructure_type" required:"true" enum:"next_gen_firewall,ddos_protection,secure_web_gateway,intrusion_prevention" maxLength:"30" example:"next_gen_firewall" doc:"Required: next_gen_firewall, ddos_protection, secure_web_gateway or intrusion_prevention"`
	Throughput         string                 `json:"throughput" required:"true" maxLength:"20" example:"1gbps" doc:"Required: <n>mbps or <n>gbps, one of the offer's options"`
	Location           *catalog.LocationInput `json:"location,omitempty" doc:"Where the devices sit; one of location and location_id is required"`
	LocationID         string                 `json:"location_id,omitempty" maxLength:"60" example:"loc_austin_congress" doc:"Where the devices sit (or location)"`
	HighAvailability   bool                   `json:"high_availability,omitempty" doc:"Two devices in an active/standby pair"`
	Features           []string               `json:"features,omitempty" maxItems:"10" doc:"ips, url_filtering, antivirus, sandboxing, ssl_inspection, application_control, geo_blocking"`
	ProtectedNetworks  []string               `json:"protected_networks" required:"true" minItems:"1" example:"[\"10.20.0.0/16\"]" maxItems:"50" doc:"Required: 1 to 50 networks in CIDR notation (e.g. 10.20.0.0/16), without host bits, not overlapping"`
	SLA                string                 `json:"sla,omitempty" enum:"standard,premium,enterprise" maxLength:"20" doc:"standard, premium or enterprise; default standard"`
	OrderExtras
}

// ServiceKind returns security_infrastructure.
func (b *SecurityInfrastructureBody) ServiceKind() string { return KindSecurityInfrastructure }

var infrastructureTypes = []string{"next_gen_firewall", "ddos_protection", "secure_web_gateway", "intrusion_prevention"}

func (b *SecurityInfrastructureBody) prepare(p *orderPrep, o *ProvisioningOrder) error {
	v := p.v
	b.OrderExtras.apply(o)
	o.AccountID, o.SLA = strings.TrimSpace(b.AccountID), strings.TrimSpace(b.SLA)
	o.ServiceType = strings.TrimSpace(b.InfrastructureType)
	if p.required(o.ServiceType != "", "infrastructure_type") {
		v.Check(slices.Contains(infrastructureTypes, o.ServiceType), "infrastructure_type", "must be one of "+strings.Join(infrastructureTypes, ", "))
	} else {
		o.ServiceType = "next_gen_firewall"
	}
	o.Bandwidth = strings.TrimSpace(b.Throughput)
	if !p.required(o.Bandwidth != "", "throughput") {
		o.Bandwidth = quoteDefaultBandwidth(p, o)
	}
	o.LocationID = strings.TrimSpace(b.LocationID)
	switch {
	case b.Location != nil && o.LocationID != "":
		v.Add("location", "give either location or location_id, not both")
	case b.Location != nil:
		o.Location = b.Location.Normalize()
		o.Location.Validate(v, "location")
	case o.LocationID == "":
		if !p.quote {
			v.Add("location", "is required: a postal location {address, city, state, zip} or a location_id from the availability check")
		} else {
			p.missing = append(p.missing, "location")
		}
	}
	prof, _ := LookupKind(KindSecurityInfrastructure)
	o.Features = CheckList(v, "features", b.Features, prof.Features, 0, 10)
	if slices.Contains(o.Features, "ssl_inspection") {
		v.Check(o.ServiceType == "next_gen_firewall" || o.ServiceType == "secure_web_gateway", "features", "ssl_inspection needs next_gen_firewall or secure_web_gateway")
	}
	if p.required(len(b.ProtectedNetworks) > 0, "protected_networks") {
		CheckCIDRs(v, "protected_networks", b.ProtectedNetworks, 50)
	}
	o.Quantity = 1
	if b.HighAvailability {
		o.Quantity, o.Redundancy = 2, "dual_path"
	}
	return nil
}

// CheckCIDRs records the issues of a list of networks in CIDR notation:
// each valid, without host bits, none overlapping another, at most max.
// It returns the networks in canonical form.
func CheckCIDRs(v *models.Validator, field string, cidrs []string, maxItems int) []string {
	if len(cidrs) > maxItems {
		v.Add(field, fmt.Sprintf("must list at most %d networks", maxItems))
		return nil
	}
	var out []string
	var seen []svcPrefixAt
	for i, c := range cidrs {
		f := fmt.Sprintf("%s[%d]", field, i)
		pfx, err := svcParsePrefix(c)
		if err != nil {
			v.Add(f, "must be a network in CIDR notation, e.g. 10.20.0.0/16")
			continue
		}
		if pfx.Masked() != pfx {
			v.Add(f, fmt.Sprintf("has host bits set; the network is %s", pfx.Masked()))
			continue
		}
		clash := -1
		for _, s := range seen {
			if s.p.Overlaps(pfx) {
				clash = s.i
				break
			}
		}
		if clash >= 0 {
			v.Add(f, fmt.Sprintf("overlaps %s[%d]", field, clash))
			continue
		}
		seen = append(seen, svcPrefixAt{pfx, i})
		out = append(out, pfx.String())
	}
	return out
}

type svcPrefixAt struct {
	p netip.Prefix
	i int
}

func svcParsePrefix(s string) (netip.Prefix, error) { return netip.ParsePrefix(strings.TrimSpace(s)) }
