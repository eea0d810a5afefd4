package services

import (
	"fmt"
	"slices"
	"strings"
)

// PlatformInstances bound an application platform's instances.
type PlatformInstances struct {
	Min int `json:"min" required:"true" minimum:"1" maximum:"100" example:"2" doc:"Required: 1 to 100"`
	Max int `json:"max" required:"true" minimum:"1" maximum:"100" example:"10" doc:"Required: min to 100"`
}

// PlatformDatabase is a managed database of an application platform.
type PlatformDatabase struct {
	Engine  string `json:"engine" required:"true" enum:"postgres,mysql,redis" maxLength:"20" example:"postgres" doc:"Required: postgres, mysql or redis"`
	Storage string `json:"storage" required:"true" maxLength:"10" example:"100GB" doc:"Required: <n>GB, 10 to 16000"`
}

// CloudPlatformBody is the cloud platform (platform as a service) create
// body; the specification shows none, this one is of our design
// (docs/services.md).
type CloudPlatformBody struct {
	AccountID     string             `json:"account_id,omitempty" maxLength:"64" doc:"Billing account; default: the organization's oldest"`
	Runtime       string             `json:"runtime" required:"true" enum:"nodejs20,python312,go123,java21,dotnet8,ruby33,container" maxLength:"20" example:"nodejs20" doc:"Required: nodejs20, python312, go123, java21, dotnet8, ruby33 or container"`
	Region        string             `json:"region" required:"true" minLength:"1" maxLength:"30" example:"us-east-1" doc:"Required: a region id"`
	Environments  []string           `json:"environments" required:"true" minItems:"1" pattern:"^[a-z][a-z0-9-]{0,29}$" example:"[\"production\"]" maxItems:"10" doc:"Required: 1 to 10 environment names (lowercase letters, digits, dashes), e.g. production, staging"`
	InstanceSize  string             `json:"instance_size" required:"true" enum:"small,medium,large,xlarge" maxLength:"10" example:"medium" doc:"Required: small (1 vCPU), medium (2), large (4) or xlarge (8)"`
	Instances     *PlatformInstances `json:"instances,omitempty" doc:"Instances per environment; default {min: 1, max: 3}"`
	CustomDomains []string           `json:"custom_domains,omitempty" maxItems:"20" doc:"Host names served by the platform"`
	Database      *PlatformDatabase  `json:"database,omitempty"`
	SLA           string             `json:"sla,omitempty" enum:"standard,premium,enterprise" maxLength:"20" doc:"standard or premium (the offer's options); default standard"`
	OrderExtras
}

// ServiceKind returns cloud_platform.
func (b *CloudPlatformBody) ServiceKind() string { return KindCloudPlatform }

var (
	platformRuntimes = []string{"nodejs20", "python312", "go123", "java21", "dotnet8", "ruby33", "container"}
	instanceSizes    = map[string]int{"small": 1, "medium": 2, "large": 4, "xlarge": 8}
	databaseEngines  = []string{"postgres", "mysql", "redis"}
)

// InstanceSizeVCPUs returns the vCPUs of an application platform instance size (0 when unknown).
func InstanceSizeVCPUs(size string) int { return instanceSizes[size] }

func (b *CloudPlatformBody) prepare(p *orderPrep, o *ProvisioningOrder) error {
	v := p.v
	b.OrderExtras.apply(o)
	o.AccountID, o.SLA = strings.TrimSpace(b.AccountID), strings.TrimSpace(b.SLA)
	o.ServiceType = strings.TrimSpace(b.Runtime)
	if p.required(o.ServiceType != "", "runtime") {
		v.Check(slices.Contains(platformRuntimes, o.ServiceType), "runtime", "must be one of "+strings.Join(platformRuntimes, ", "))
	} else {
		o.ServiceType = "container"
	}
	region := "us-east-1"
	if p.required(strings.TrimSpace(b.Region) != "", "region") {
		if r := p.checkRegions("region", []string{b.Region}, 1, 1, false); len(r) == 1 {
			region = r[0]
		}
	}
	var envs []string
	if p.required(len(b.Environments) > 0, "environments") {
		if len(b.Environments) > 10 {
			v.Add("environments", "must list at most 10 environments")
		}
		for i, e := range b.Environments {
			e = strings.TrimSpace(e)
			switch {
			case !svcEnvNamePattern.MatchString(e):
				v.Add(fmt.Sprintf("environments[%d]", i), "must be a name of lowercase letters, digits and dashes (at most 30)")
			case slices.Contains(envs, e):
				v.Add(fmt.Sprintf("environments[%d]", i), fmt.Sprintf("%q is listed twice", e))
			default:
				envs = append(envs, e)
			}
		}
	} else {
		envs = []string{"production"}
	}
	size := strings.TrimSpace(b.InstanceSize)
	if p.required(size != "", "instance_size") {
		v.Check(instanceSizes[size] > 0, "instance_size", "must be small, medium, large or xlarge")
	} else {
		size = "small"
	}
	inst := PlatformInstances{Min: 1, Max: 3}
	if b.Instances != nil {
		inst = *b.Instances
		v.Check(inst.Min >= 1 && inst.Min <= 100, "instances.min", "must be from 1 to 100")
		v.Check(inst.Max >= 1 && inst.Max <= 100, "instances.max", "must be from 1 to 100")
		v.Check(inst.Min <= inst.Max, "instances", "min must not exceed max")
	}
	for i, d := range b.CustomDomains {
		v.Check(len(d) <= 253 && svcHostnamePattern.MatchString(d), fmt.Sprintf("custom_domains[%d]", i), "must be a host name, e.g. app.example.com")
	}
	if db := b.Database; db != nil {
		v.Check(slices.Contains(databaseEngines, db.Engine), "database.engine", "must be postgres, mysql or redis")
		if gb, err := ParseSizeGB("database.storage", db.Storage); err != nil || gb < 10 || gb > 16000 {
			v.Add("database.storage", "must be <n>GB from 10GB to 16000GB")
		}
	}
	o.Quantity = max(len(envs), 1)
	if vcpu := instanceSizes[size] * max(inst.Min, 1) * len(envs); vcpu > 0 {
		o.Compute = []ComputeRequest{{Region: region, Pool: "vcpu", Units: vcpu}}
	}
	for _, e := range envs {
		o.Deployment = append(o.Deployment, DeployItem{Type: "application_environment", Name: e, Region: region, Count: 1,
			Spec: map[string]any{"runtime": o.ServiceType, "instance_size": size, "min_instances": inst.Min, "max_instances": inst.Max}})
	}
	return nil
}
