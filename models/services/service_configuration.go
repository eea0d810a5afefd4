package services

import (
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/catalog"
)

// ---------------------------------------------------------------------------
// Configuration settings (PUT /services/{id}/configuration).

// settingRule says what values a configuration setting takes.
type settingRule struct {
	Type   string // enum, bool, int, email, emails, ips, cidrs, hostnames, countries, strings, timezone, response_time
	Values []string
	Min    int
	Max    int // int: the range; lists: the most items
	Doc    string
}

// SettingDoc describes one configuration setting of a kind.
type SettingDoc struct {
	Name        string
	Type        string
	Values      []string
	Min, Max    int
	Description string
}

// serviceSettings returns the settings a kind of service accepts.
func serviceSettings(kind string) map[string]settingRule {
	common := map[string]settingRule{
		"alert_emails":              {Type: "emails", Max: 10, Doc: "addresses that receive alerts about the service"},
		"maintenance_notifications": {Type: "bool", Doc: "notify the contacts of scheduled maintenance"},
	}
	connectivity := map[string]settingRule{
		"qos_profile":     {Type: "enum", Values: []string{"standard", "voice_priority", "bulk_data"}, Doc: "traffic class priorities"},
		"monitoring":      {Type: "enum", Values: MonitoringValues, Doc: "monitoring level (also the service's monitoring)"},
		"routed_prefixes": {Type: "cidrs", Max: 20, Doc: "customer networks routed to the service, CIDR notation, not overlapping"},
	}
	own := map[string]map[string]settingRule{
		catalog.KindInternet: {
			"dns_servers": {Type: "ips", Max: 4, Doc: "resolvers handed out to the customer's equipment"},
			"redundancy":  {Type: "enum", Values: RedundancyValues, Doc: "access redundancy (also the service's redundancy)"},
		},
		catalog.KindNetwork: {
			"encryption": {Type: "bool", Doc: "encrypt traffic between sites"},
			"redundancy": {Type: "enum", Values: RedundancyValues, Doc: "access redundancy at every site"},
		},
		KindPhoneSystem: {
			"voicemail_email":          {Type: "email", Doc: "where voicemail is sent when voicemail_to_email is on"},
			"recording_retention_days": {Type: "int", Min: 1, Max: 3650},
			"timezone":                 {Type: "timezone", Doc: "IANA time zone of the business hours"},
		},
		KindContactCenter: {
			"max_queue_wait_seconds":   {Type: "int", Min: 10, Max: 3600},
			"recording_retention_days": {Type: "int", Min: 1, Max: 3650},
			"timezone":                 {Type: "timezone"},
		},
		KindCloudInfrastructure: {
			"backup_retention_days": {Type: "int", Min: 1, Max: 365},
			"min_instances":         {Type: "int", Min: 1, Max: 1000, Doc: "auto-scaling lower bound (at most max_instances)"},
			"max_instances":         {Type: "int", Min: 1, Max: 1000, Doc: "auto-scaling upper bound"},
		},
		KindCloudPlatform: {
			"min_instances":      {Type: "int", Min: 1, Max: 100, Doc: "instances per environment, lower bound (at most max_instances)"},
			"max_instances":      {Type: "int", Min: 1, Max: 100},
			"log_retention_days": {Type: "int", Min: 1, Max: 365},
			"custom_domains":     {Type: "hostnames", Max: 20},
		},
		KindManagedSecurity: {
			"escalation_emails":      {Type: "emails", Max: 10},
			"response_time_critical": {Type: "response_time", Doc: "<n>_minutes, <n>_hour or <n>_hours; critical <= high <= medium"},
			"response_time_high":     {Type: "response_time"},
			"response_time_medium":   {Type: "response_time"},
		},
		KindSecurityInfrastructure: {
			"protected_networks":  {Type: "cidrs", Max: 50, Doc: "networks behind the devices, CIDR notation, not overlapping"},
			"log_retention_days":  {Type: "int", Min: 1, Max: 365},
			"geo_block_countries": {Type: "countries", Max: 50, Doc: "ISO 3166 alpha-2 codes of the countries blocked"},
		},
		KindAIPlatform: {
			"data_sources":            {Type: "strings", Max: 20, Doc: "names or addresses of the data sources"},
			"max_gpu_hours_per_month": {Type: "int", Min: 1, Max: 100000},
		},
	}
	out := map[string]settingRule{}
	for k, r := range common {
		out[k] = r
	}
	if kind == catalog.KindInternet || kind == catalog.KindNetwork {
		for k, r := range connectivity {
			out[k] = r
		}
	}
	for k, r := range own[kind] {
		out[k] = r
	}
	return out
}

// ServiceSettings documents the configuration settings of a kind, by name.
func ServiceSettings(kind string) []SettingDoc {
	rules := serviceSettings(kind)
	out := make([]SettingDoc, 0, len(rules))
	for name, r := range rules {
		out = append(out, SettingDoc{Name: name, Type: r.Type, Values: r.Values, Min: r.Min, Max: r.Max, Description: r.Doc})
	}
	slices.SortFunc(out, func(a, b SettingDoc) int { return strings.Compare(a.Name, b.Name) })
	return out
}

var svcCountryPattern = regexp.MustCompile(`^[A-Z]{2}$`)

// checkSetting applies the rules a schema cannot state (addresses, networks,
// time zones, response times) to one setting whose shape its schema has
// accepted (checkSettingShapes), and returns the value normalised.
func checkSetting(v *models.Validator, field string, r settingRule, val any) any {
	switch r.Type {
	case "enum", "bool":
		return val
	case "int":
		switch n := val.(type) {
		case float64:
			return int(n)
		case int:
			return n
		}
		return val
	case "email":
		str, ok := val.(string)
		if !ok || !models.ValidEmail(str) {
			v.Add(field, "must be an e-mail address")
			return nil
		}
		return str
	case "timezone":
		str, ok := val.(string)
		if ok && str != "" && str != "Local" {
			_, err := time.LoadLocation(str)
			ok = err == nil
		} else {
			ok = false
		}
		if !ok {
			v.Add(field, "must be an IANA time zone, e.g. America/Chicago")
			return nil
		}
		return str
	case "response_time":
		str, ok := val.(string)
		if !ok {
			v.Add(field, "must be <n>_minutes, <n>_hour or <n>_hours")
			return nil
		}
		if _, err := ParseResponseTime(field, str); err != nil {
			v.Add(field, "must be <n>_minutes, <n>_hour or <n>_hours, e.g. 15_minutes")
			return nil
		}
		return str
	}
	var items []string
	switch list := val.(type) {
	case []string:
		for _, it := range list {
			items = append(items, strings.TrimSpace(it))
		}
	case []any:
		for _, it := range list {
			str, _ := it.(string)
			items = append(items, strings.TrimSpace(str))
		}
	}
	for i, it := range items {
		f := fmt.Sprintf("%s[%d]", field, i)
		switch r.Type {
		case "emails":
			v.Check(models.ValidEmail(it), f, "must be an e-mail address")
		case "ips":
			_, err := netip.ParseAddr(it)
			v.Check(err == nil, f, "must be an IPv4 or IPv6 address")
		case "hostnames":
			v.Check(len(it) <= 253 && svcHostnamePattern.MatchString(it), f, "must be a host name, e.g. app.example.com")
		case "countries":
			v.Check(svcCountryPattern.MatchString(it), f, "must be an ISO 3166 alpha-2 country code in upper case, e.g. DE")
		case "strings":
			v.Check(it != "" && len(it) <= 200, f, "must be 1 to 200 characters")
		}
	}
	if r.Type == "cidrs" {
		return CheckCIDRs(v, field, items, r.Max)
	}
	return items
}

// mergeConfiguration validates settings against the service's kind and
// merges them into its configuration (a null value removes a setting). It
// returns the new configuration, and the monitoring and redundancy settings
// when given (they are also columns of the service). Errors: INTERNAL_ERROR
// (the kind's settings schema does not compile).
func (s *Store) mergeConfiguration(v *models.Validator, svc *Service, settings map[string]any) (cfg map[string]any, monitoring, redundancy string, err error) {
	rules := serviceSettings(svc.Kind)
	cfg = map[string]any{}
	for k, val := range svc.Configuration {
		cfg[k] = val
	}
	if len(settings) == 0 {
		v.Add("configuration", "must set at least one setting")
	}
	bad, err := checkSettingShapes(v, svc.Kind, settings)
	if err != nil {
		return nil, "", "", err
	}
	for k, val := range settings {
		field := "configuration." + k
		r, ok := rules[k]
		if !ok || bad[k] {
			continue // reported by checkSettingShapes
		}
		if val == nil {
			delete(cfg, k)
			continue
		}
		if norm := checkSetting(v, field, r, val); norm != nil {
			cfg[k] = norm
			switch k {
			case "monitoring":
				monitoring, _ = norm.(string)
			case "redundancy":
				redundancy, _ = norm.(string)
			}
		}
	}
	asInt := func(k string, def int) int {
		switch n := cfg[k].(type) {
		case int:
			return n
		case float64:
			return int(n)
		}
		return def
	}
	if _, has := rules["min_instances"]; has {
		lo, hi := asInt("min_instances", 1), asInt("max_instances", 1000)
		v.Check(lo <= hi, "configuration.min_instances", "must not exceed max_instances")
	}
	if _, has := rules["response_time_critical"]; has {
		var prev time.Duration
		for _, k := range []string{"response_time_critical", "response_time_high", "response_time_medium"} {
			str, _ := cfg[k].(string)
			if str == "" {
				continue
			}
			d, err := ParseResponseTime(k, str)
			if err != nil {
				continue
			}
			v.Check(d >= prev, "configuration."+k, "must not be shorter than the target of a more severe level")
			prev = d
		}
	}
	return cfg, monitoring, redundancy, nil
}

// ProvisionedData is the data of a service.provisioned event.
func ProvisionedData(svc *Service, opID string) map[string]any {
	return map[string]any{
		"service": map[string]any{
			"id": svc.ID, "status": string(svc.Status), "type": svc.Kind, "service_type": svc.ServiceType,
			"account_id": svc.AccountID, "bandwidth": svc.Bandwidth, "sla": svc.SLA, "location_id": svc.LocationID,
		},
		"request_id": opID,
	}
}
