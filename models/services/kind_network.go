package services

import (
	"fmt"
	"slices"
	"strings"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/catalog"
)

// NetworkSite is one site of a network (spec 2.1).
type NetworkSite struct {
	ID      string `json:"id" required:"true" minLength:"1" maxLength:"60" example:"loc_austin_congress" doc:"Required: a serviceable location id (loc_...) from the availability check"`
	Address string `json:"address,omitempty" maxLength:"200" doc:"A label for the site (recorded)"`
	Role    string `json:"role,omitempty" enum:"hub,spoke" maxLength:"10" example:"hub" doc:"hub or spoke (hub_and_spoke); omitted otherwise"`
}

// NetworkBody is the network deployment create body (spec 2.1).
type NetworkBody struct {
	AccountID   string        `json:"account_id,omitempty" maxLength:"64" doc:"Billing account; default: the organization's oldest"`
	NetworkType string        `json:"network_type" required:"true" enum:"mpls,sdwan" maxLength:"20" example:"sdwan" doc:"Required: mpls or sdwan"`
	Topology    string        `json:"topology" required:"true" enum:"hub_and_spoke,full_mesh,point_to_point" maxLength:"20" example:"hub_and_spoke" doc:"Required: hub_and_spoke (exactly one hub, at least one spoke), full_mesh (at least two sites) or point_to_point (exactly two sites)"`
	Locations   []NetworkSite `json:"locations" required:"true" minItems:"2" maxItems:"50" example:"[{\"id\":\"loc_austin_congress\",\"role\":\"hub\"},{\"id\":\"loc_dallas_main\",\"role\":\"spoke\"}]" doc:"Required: the sites, 2 to 50, each a different location"`
	Bandwidth   string        `json:"bandwidth" required:"true" maxLength:"20" example:"100mbps" doc:"Required: per site, one of the offer's options"`
	Redundancy  bool          `json:"redundancy,omitempty" doc:"Dual-path access at every site"`
	SLA         string        `json:"sla,omitempty" enum:"standard,premium,enterprise" maxLength:"20" doc:"standard, premium or enterprise as the offer has it; default: the offer's first"`
	OrderExtras
}

// ServiceKind returns network.
func (b *NetworkBody) ServiceKind() string { return catalog.KindNetwork }

// Network topologies.
var networkTopologies = []string{"hub_and_spoke", "full_mesh", "point_to_point"}

func (b *NetworkBody) prepare(p *orderPrep, o *ProvisioningOrder) error {
	v := p.v
	b.OrderExtras.apply(o)
	o.AccountID, o.Bandwidth, o.SLA = strings.TrimSpace(b.AccountID), strings.TrimSpace(b.Bandwidth), strings.TrimSpace(b.SLA)
	o.ServiceType = strings.TrimSpace(b.NetworkType)
	if st, ok := catalog.LookupServiceType(o.ServiceType); !ok || st.Kind != catalog.KindNetwork {
		if p.required(o.ServiceType != "", "network_type") {
			v.Add("network_type", "must be one of "+strings.Join(catalog.ServiceTypeNames(catalog.KindNetwork), ", "))
		} else {
			o.ServiceType = "mpls"
		}
	}
	if b.Redundancy {
		o.Redundancy = "dual_path"
	}
	if p.quote && !p.required(o.Bandwidth != "", "bandwidth") {
		o.Bandwidth = quoteDefaultBandwidth(p, o)
	}
	topology := strings.TrimSpace(b.Topology)
	if p.required(topology != "", "topology") {
		v.Check(slices.Contains(networkTopologies, topology), "topology", "must be one of "+strings.Join(networkTopologies, ", "))
	}
	if !p.required(len(b.Locations) > 0, "locations") {
		o.Quantity = 2
		return nil
	}
	v.Check(len(b.Locations) >= 2 && len(b.Locations) <= 50, "locations", "must list 2 to 50 sites")
	hubs, spokes := 0, 0
	seen := map[string]bool{}
	for i, l := range b.Locations {
		f := fmt.Sprintf("locations[%d]", i)
		site := OrderSite{LocationID: strings.TrimSpace(l.ID), Role: strings.TrimSpace(l.Role), Address: strings.Join(strings.Fields(l.Address), " ")}
		if site.LocationID == "" {
			v.Add(f+".id", "is required: a location id (loc_...) from the availability check")
		} else if !models.HasPrefix(site.LocationID, catalog.PrefixLocation) {
			v.Add(f+".id", "must be a location id (loc_...)")
		} else if seen[site.LocationID] {
			v.Add(f+".id", fmt.Sprintf("%s is listed twice", site.LocationID))
		} else {
			seen[site.LocationID] = true
			if _, err := p.s.catalog.LocationByID(p.ctx, p.env, f+".id", site.LocationID); err != nil {
				if models.ErrorCode(err) != models.CodeValidation {
					return err
				}
				v.Add(f+".id", fmt.Sprintf("no serviceable location %q", site.LocationID))
			}
		}
		switch site.Role {
		case "hub":
			hubs++
		case "spoke":
			spokes++
		case "":
			if topology == "hub_and_spoke" {
				v.Add(f+".role", "is required with hub_and_spoke: hub or spoke")
			}
		default:
			v.Add(f+".role", "must be hub or spoke")
		}
		o.Sites = append(o.Sites, site)
	}
	switch topology {
	case "hub_and_spoke":
		v.Check(hubs == 1, "locations", fmt.Sprintf("hub_and_spoke needs exactly one hub; %d given", hubs))
		v.Check(spokes >= 1, "locations", "hub_and_spoke needs at least one spoke")
		// the hub is the primary site: it comes first
		slices.SortStableFunc(o.Sites, func(a, b OrderSite) int {
			if a.Role == b.Role {
				return 0
			}
			if a.Role == "hub" {
				return -1
			}
			return 1
		})
	case "point_to_point":
		v.Check(len(b.Locations) == 2, "locations", "point_to_point links exactly two sites")
	}
	if topology != "hub_and_spoke" && hubs+spokes > 0 {
		v.Add("locations", "roles hub and spoke belong to hub_and_spoke; omit them for "+topology)
	}
	o.Quantity = len(o.Sites)
	return nil
}
