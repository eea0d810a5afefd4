package services

import (
	"fmt"
	"slices"
	"strings"
)

// VMSpecifications size a virtual machine (spec 2.1).
type VMSpecifications struct {
	CPU     int    `json:"cpu" required:"true" minimum:"1" maximum:"128" example:"4" doc:"Required: vCPUs, 1 to 128"`
	Memory  string `json:"memory" required:"true" maxLength:"10" example:"16GB" doc:"Required: <n>GB, 1 to 4096"`
	Storage string `json:"storage" required:"true" maxLength:"10" example:"500GB" doc:"Required: <n>GB or <n>TB, at most 64TB"`
	OS      string `json:"os" required:"true" enum:"ubuntu-20.04,ubuntu-22.04,ubuntu-24.04,debian-12,rhel-9,rocky-9,windows-server-2019,windows-server-2022" maxLength:"30" example:"ubuntu-22.04" doc:"Required: ubuntu-20.04, ubuntu-22.04, ubuntu-24.04, debian-12, rhel-9, rocky-9, windows-server-2019 or windows-server-2022"`
}

// CloudResource is a resource of a cloud infrastructure (spec 2.1).
type CloudResource struct {
	Type           string            `json:"type" required:"true" enum:"virtual_machine,load_balancer" maxLength:"20" example:"virtual_machine" doc:"Required: virtual_machine or load_balancer"`
	Specifications *VMSpecifications `json:"specifications,omitempty" doc:"virtual_machine: required"`
	Quantity       int               `json:"quantity,omitempty" example:"3" doc:"virtual_machine: 1 to 100 (default 1)"`
	Tier           string            `json:"tier,omitempty" enum:"basic,standard,premium" maxLength:"20" example:"standard" doc:"load_balancer: required, basic, standard or premium"`
	SSLTermination bool              `json:"ssl_termination,omitempty" doc:"load_balancer: terminate TLS"`
}

// AutoScaling is the auto-scaling policy of a cloud infrastructure (spec 2.1).
type AutoScaling struct {
	Enabled      bool `json:"enabled,omitempty"`
	MinInstances int  `json:"min_instances,omitempty" doc:"1 or more; at most max_instances"`
	MaxInstances int  `json:"max_instances,omitempty" doc:"at least min_instances; at most 1000"`
}

// CloudInfrastructureBody is the cloud infrastructure create body (spec 2.1).
type CloudInfrastructureBody struct {
	AccountID      string          `json:"account_id,omitempty" maxLength:"64" doc:"Billing account; default: the organization's oldest"`
	DeploymentType string          `json:"deployment_type" required:"true" enum:"single_cloud,multi_cloud,hybrid_cloud" maxLength:"20" example:"multi_cloud" doc:"Required: single_cloud (one provider), multi_cloud (two or more) or hybrid_cloud (private plus at least one other)"`
	Providers      []string        `json:"providers" required:"true" minItems:"1" enum:"aws,azure,gcp,oracle,private" example:"[\"aws\",\"azure\"]" maxItems:"5" doc:"Required: aws, azure, gcp, oracle, private"`
	Regions        []string        `json:"regions" required:"true" minItems:"1" example:"[\"us-east-1\"]" maxItems:"10" doc:"Required: region ids, e.g. us-east-1 (see docs/services.md); the resources are deployed in each"`
	Resources      []CloudResource `json:"resources" required:"true" minItems:"1" maxItems:"20" example:"[{\"type\":\"virtual_machine\",\"specifications\":{\"cpu\":4,\"memory\":\"16GB\",\"storage\":\"500GB\",\"os\":\"ubuntu-22.04\"}}]" doc:"Required: at least one virtual_machine"`
	AutoScaling    *AutoScaling    `json:"auto_scaling,omitempty"`
	SLA            string          `json:"sla,omitempty" enum:"standard,premium,enterprise" maxLength:"20" doc:"standard, premium or enterprise; default standard"`
	OrderExtras
}

// ServiceKind returns cloud_infrastructure.
func (b *CloudInfrastructureBody) ServiceKind() string { return KindCloudInfrastructure }

var (
	deploymentTypes  = []string{"single_cloud", "multi_cloud", "hybrid_cloud"}
	cloudProviders   = []string{"aws", "azure", "gcp", "oracle", "private"}
	operatingSystems = []string{"ubuntu-20.04", "ubuntu-22.04", "ubuntu-24.04", "debian-12", "rhel-9", "rocky-9", "windows-server-2019", "windows-server-2022"}
	lbTiers          = []string{"basic", "standard", "premium"}
)

// checkRegions validates region ids: each must exist in env (a compute
// region of the inventory).
func (p *orderPrep) checkRegions(field string, regions []string, minItems, maxItems int, indexed bool) []string {
	v := p.v
	out := make([]string, 0, len(regions))
	if len(regions) < minItems || len(regions) > maxItems {
		v.Add(field, fmt.Sprintf("must list %d to %d regions", minItems, maxItems))
	}
	known, err := p.s.catalog.ComputeRegions(p.ctx, p.env)
	if err != nil {
		return out
	}
	for i, r := range regions {
		r = strings.TrimSpace(r)
		f := field
		if indexed {
			f = fmt.Sprintf("%s[%d]", field, i)
		}
		switch {
		case !svcRegionPattern.MatchString(r) || !slices.Contains(known, r):
			v.Add(f, "must be one of "+strings.Join(known, ", "))
		case slices.Contains(out, r):
			v.Add(f, fmt.Sprintf("%q is listed twice", r))
		default:
			out = append(out, r)
		}
	}
	return out
}

func (b *CloudInfrastructureBody) prepare(p *orderPrep, o *ProvisioningOrder) error {
	v := p.v
	b.OrderExtras.apply(o)
	o.AccountID, o.SLA = strings.TrimSpace(b.AccountID), strings.TrimSpace(b.SLA)
	o.ServiceType = strings.TrimSpace(b.DeploymentType)
	if p.required(o.ServiceType != "", "deployment_type") {
		v.Check(slices.Contains(deploymentTypes, o.ServiceType), "deployment_type", "must be one of "+strings.Join(deploymentTypes, ", "))
	} else {
		o.ServiceType = "single_cloud"
	}
	var providers []string
	if p.required(len(b.Providers) > 0, "providers") {
		providers = CheckList(v, "providers", b.Providers, cloudProviders, 1, 5)
		switch o.ServiceType {
		case "single_cloud":
			v.Check(len(providers) == 1, "providers", "single_cloud uses exactly one provider")
		case "multi_cloud":
			v.Check(len(providers) >= 2, "providers", "multi_cloud needs at least two providers")
		case "hybrid_cloud":
			v.Check(slices.Contains(providers, "private") && len(providers) >= 2, "providers", "hybrid_cloud needs private and at least one public provider")
		}
	}
	var regions []string
	if p.required(len(b.Regions) > 0, "regions") {
		regions = p.checkRegions("regions", b.Regions, 1, 10, true)
	} else {
		regions = []string{"us-east-1"}
	}
	vms, vcpus := 0, 0
	if p.required(len(b.Resources) > 0, "resources") {
		v.Check(len(b.Resources) <= 20, "resources", "must list at most 20 resources")
	}
	for i, r := range b.Resources {
		f := fmt.Sprintf("resources[%d]", i)
		switch strings.TrimSpace(r.Type) {
		case "virtual_machine":
			qty := r.Quantity
			if qty == 0 {
				qty = 1
			}
			v.Check(qty >= 1 && qty <= 100, f+".quantity", "must be from 1 to 100")
			v.Check(r.Tier == "" && !r.SSLTermination, f, "tier and ssl_termination belong to load balancers")
			spec := r.Specifications
			if spec == nil {
				v.Add(f+".specifications", "is required for a virtual_machine: {cpu, memory, storage, os}")
				continue
			}
			v.Check(spec.CPU >= 1 && spec.CPU <= 128, f+".specifications.cpu", "must be from 1 to 128")
			if mem, err := ParseSizeGB(f+".specifications.memory", spec.Memory); err != nil || mem > 4096 || strings.HasSuffix(strings.ToUpper(spec.Memory), "TB") {
				v.Add(f+".specifications.memory", "must be <n>GB, from 1GB to 4096GB")
			}
			if st, err := ParseSizeGB(f+".specifications.storage", spec.Storage); err != nil || st > 64000 {
				v.Add(f+".specifications.storage", "must be <n>GB or <n>TB, at most 64TB")
			}
			v.Check(slices.Contains(operatingSystems, strings.TrimSpace(spec.OS)), f+".specifications.os", "must be one of "+strings.Join(operatingSystems, ", "))
			vms += max(qty, 0)
			vcpus += max(qty, 0) * max(spec.CPU, 0)
			o.Deployment = append(o.Deployment, DeployItem{Type: "virtual_machine", Name: fmt.Sprintf("vm-%d", i+1), Count: qty,
				Spec: map[string]any{"cpu": spec.CPU, "memory": strings.ToUpper(strings.ReplaceAll(spec.Memory, " ", "")), "storage": strings.ToUpper(strings.ReplaceAll(spec.Storage, " ", "")), "os": spec.OS}})
		case "load_balancer":
			v.Check(slices.Contains(lbTiers, r.Tier), f+".tier", "is required for a load_balancer: basic, standard or premium")
			v.Check(r.Specifications == nil, f+".specifications", "belongs to virtual machines")
			v.Check(r.Quantity == 0 || r.Quantity == 1, f+".quantity", "a load_balancer entry is one load balancer")
			o.PublicIP = true
			o.Deployment = append(o.Deployment, DeployItem{Type: "load_balancer", Name: fmt.Sprintf("lb-%d", i+1), Count: 1,
				Spec: map[string]any{"tier": r.Tier, "ssl_termination": r.SSLTermination}})
		case "":
			p.required(false, f+".type")
		default:
			v.Add(f+".type", "must be virtual_machine or load_balancer")
		}
	}
	if len(b.Resources) > 0 {
		v.Check(vms > 0, "resources", "must include at least one virtual_machine")
	}
	if as := b.AutoScaling; as != nil {
		if as.Enabled || as.MinInstances != 0 || as.MaxInstances != 0 {
			v.Check(as.MinInstances >= 1, "auto_scaling.min_instances", "must be 1 or more")
			v.Check(as.MaxInstances <= 1000, "auto_scaling.max_instances", "must be at most 1000")
			v.Check(as.MinInstances <= as.MaxInstances, "auto_scaling", "min_instances must not exceed max_instances")
		}
		if as.Enabled && vms > 0 && as.MinInstances <= as.MaxInstances {
			v.Check(vms >= as.MinInstances && vms <= as.MaxInstances, "auto_scaling", fmt.Sprintf("the %d virtual machines ordered must be between min_instances and max_instances", vms))
		}
	}
	// every region runs the resources
	for i := range o.Deployment {
		o.Deployment[i].Region = strings.Join(regions, ",")
	}
	for _, r := range regions {
		if vcpus > 0 {
			o.Compute = append(o.Compute, ComputeRequest{Region: r, Pool: "vcpu", Units: vcpus})
		}
	}
	o.Quantity = max(vms, 1)
	return nil
}
