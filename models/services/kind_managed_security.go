package services

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// ResponseTimes are a managed security service's response-time targets (spec 2.1).
type ResponseTimes struct {
	Critical string `json:"critical,omitempty" maxLength:"20" example:"15_minutes" doc:"<n>_minutes, <n>_hour or <n>_hours; at least 15 minutes"`
	High     string `json:"high,omitempty" maxLength:"20" example:"1_hour"`
	Medium   string `json:"medium,omitempty" maxLength:"20" example:"4_hours"`
}

// ManagedSecurityBody is the managed security create body (spec 2.1).
type ManagedSecurityBody struct {
	AccountID            string         `json:"account_id,omitempty" maxLength:"64" doc:"Billing account; default: the organization's oldest"`
	ServiceType          string         `json:"service_type" required:"true" enum:"managed_soc,managed_detection_response" maxLength:"30" example:"managed_soc" doc:"Required: managed_soc or managed_detection_response"`
	Coverage             string         `json:"coverage" required:"true" enum:"24x7x365,business_hours" maxLength:"20" example:"24x7x365" doc:"Required: 24x7x365 or business_hours"`
	Services             []string       `json:"services" required:"true" minItems:"1" enum:"threat_monitoring,incident_response,vulnerability_management,compliance_reporting" example:"[\"threat_monitoring\"]" maxItems:"4" doc:"Required: threat_monitoring, incident_response, vulnerability_management, compliance_reporting"`
	ThreatIntelligence   bool           `json:"threat_intelligence,omitempty"`
	ComplianceFrameworks []string       `json:"compliance_frameworks,omitempty" maxItems:"6" doc:"soc2, hipaa, pci_dss, iso27001, gdpr, nist_csf; required with compliance_reporting"`
	ResponseTime         *ResponseTimes `json:"response_time,omitempty" doc:"Targets, critical <= high <= medium; default 15_minutes, 1_hour, 4_hours (24x7x365) or 1_hour, 4_hours, 8_hours (business_hours)"`
	SLA                  string         `json:"sla,omitempty" enum:"standard,premium,enterprise" maxLength:"20" doc:"premium or enterprise (the offer's options); default premium"`
	OrderExtras
}

// ServiceKind returns managed_security.
func (b *ManagedSecurityBody) ServiceKind() string { return KindManagedSecurity }

var (
	securityServiceTypes = []string{"managed_soc", "managed_detection_response"}
	coverages            = []string{"24x7x365", "business_hours"}
	securityServices     = []string{"threat_monitoring", "incident_response", "vulnerability_management", "compliance_reporting"}
	complianceFrameworks = []string{"soc2", "hipaa", "pci_dss", "iso27001", "gdpr", "nist_csf"}
)

func (b *ManagedSecurityBody) prepare(p *orderPrep, o *ProvisioningOrder) error {
	v := p.v
	b.OrderExtras.apply(o)
	o.AccountID, o.SLA = strings.TrimSpace(b.AccountID), strings.TrimSpace(b.SLA)
	o.ServiceType = strings.TrimSpace(b.ServiceType)
	if p.required(o.ServiceType != "", "service_type") {
		v.Check(slices.Contains(securityServiceTypes, o.ServiceType), "service_type", "must be one of "+strings.Join(securityServiceTypes, ", "))
	} else {
		o.ServiceType = "managed_soc"
	}
	coverage := strings.TrimSpace(b.Coverage)
	if p.required(coverage != "", "coverage") {
		v.Check(slices.Contains(coverages, coverage), "coverage", "must be 24x7x365 or business_hours")
	}
	var services []string
	if p.required(len(b.Services) > 0, "services") {
		services = CheckList(v, "services", b.Services, securityServices, 1, 4)
	}
	frameworks := CheckList(v, "compliance_frameworks", b.ComplianceFrameworks, complianceFrameworks, 0, 6)
	if slices.Contains(services, "compliance_reporting") {
		v.Check(len(frameworks) > 0, "compliance_frameworks", "compliance_reporting needs at least one framework")
	} else if len(frameworks) > 0 && len(b.Services) > 0 {
		v.Add("compliance_frameworks", "frameworks are reported on by compliance_reporting: add it to services")
	}
	if rt := b.ResponseTime; rt != nil {
		floor := 15 * time.Minute
		if coverage == "business_hours" {
			floor = time.Hour
		}
		var prev time.Duration
		for _, x := range []struct{ name, val string }{{"critical", rt.Critical}, {"high", rt.High}, {"medium", rt.Medium}} {
			f := "response_time." + x.name
			if x.val == "" {
				v.Add(f, "is required: <n>_minutes, <n>_hour or <n>_hours")
				continue
			}
			d, err := ParseResponseTime(f, x.val)
			if err != nil {
				v.Add(f, "must be <n>_minutes, <n>_hour or <n>_hours, e.g. 15_minutes or 4_hours")
				continue
			}
			if x.name == "critical" {
				v.Check(d >= floor, f, fmt.Sprintf("must be at least %s with %s coverage", svcHumanDuration(floor), OrDefault(coverage, "this")))
			}
			v.Check(d <= 72*time.Hour, f, "must be at most 72_hours")
			v.Check(d >= prev, f, "must not be shorter than the target of a more severe level")
			prev = d
		}
	}
	o.Features = nil
	return nil
}

func svcHumanDuration(d time.Duration) string {
	if d%time.Hour == 0 {
		n := int(d / time.Hour)
		if n == 1 {
			return "1_hour"
		}
		return fmt.Sprintf("%d_hours", n)
	}
	return fmt.Sprintf("%d_minutes", int(d/time.Minute))
}
