package services

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/catalog"
)

// ---------------------------------------------------------------------------
// Kinds of service and their create bodies (spec 2.1; docs/services.md).

// Kinds of service besides KindInternet and KindNetwork (location.go).
const (
	KindPhoneSystem            = "phone_system"
	KindContactCenter          = "contact_center"
	KindCloudInfrastructure    = "cloud_infrastructure"
	KindCloudPlatform          = "cloud_platform"
	KindManagedSecurity        = "managed_security"
	KindSecurityInfrastructure = "security_infrastructure"
	KindAIPlatform             = "ai_platform"
)

// What PUT /services/{id}/scaling changes for a kind.
const (
	ScaleBandwidth = "bandwidth"
	ScaleQuantity  = "quantity"
)

// KindProfile describes one of the nine kinds of service: where it is
// ordered, what the catalog sells it as, what the network allocates for it,
// how it is priced and what can be changed later. Provisioning, quotes,
// changes and decommissions read these profiles instead of branching on the
// kind, so one workflow serves every kind.
type KindProfile struct {
	Kind          string
	Category      string       // catalog category
	Collection    string       // collection path, under /v1 and /api/v1
	Title         string       // human name
	Offers        []string     // catalog offers that sell the kind; the first is the default
	Located       bool         // delivered at a serviceable location
	Bandwidth     string       // the body field that carries a bandwidth ("" when none)
	Capacity      bool         // the bandwidth is reserved from the location's capacity
	PublicIP      bool         // gets a public IP block
	Reference     string       // prefix of the network's reference for the service
	Scaling       string       // what scaling changes: ScaleBandwidth, ScaleQuantity or ""
	QuantityField string       // the body field that counts billing units ("" for one unit)
	SetupFee      models.Money // one-time fee, per unit when SetupPerUnit
	SetupPerUnit  bool         // the setup fee is charged per unit
	Features      []string     // the features PUT /features may set
}

// kindProfiles is the table of kinds, in catalog order (a new slice each call).
func kindProfiles() []KindProfile {
	return []KindProfile{
		{Kind: catalog.KindInternet, Category: "connectivity", Collection: "/services/connectivity/internet", Title: "internet service",
			Offers: []string{"internet-fiber-dedicated", "internet-fiber-business"}, Located: true, Bandwidth: "bandwidth", Capacity: true, PublicIP: true,
			Reference: "CKT", Scaling: ScaleBandwidth, SetupFee: 50000,
			Features: []string{"static_ip", "ipv6", "ddos_protection", "managed_router", "bgp"}},
		{Kind: catalog.KindNetwork, Category: "connectivity", Collection: "/services/connectivity/networks", Title: "network",
			Offers: []string{"network-mpls", "network-sdwan"}, Located: true, Bandwidth: "bandwidth", Capacity: true, PublicIP: true,
			Reference: "NET", Scaling: ScaleBandwidth, QuantityField: "sites", SetupFee: 75000, SetupPerUnit: true,
			Features: []string{"qos", "encryption", "application_visibility", "wan_optimization"}},
		{Kind: KindPhoneSystem, Category: "voice", Collection: "/services/voice/systems", Title: "phone system",
			Offers: []string{"voice-cloud-pbx"}, Reference: "PBX", Scaling: ScaleQuantity, QuantityField: "users",
			Features: []string{"auto_attendant", "call_forwarding", "voicemail_to_email", "conference_bridge", "call_recording", "hunt_groups", "call_analytics"}},
		{Kind: KindContactCenter, Category: "voice", Collection: "/services/voice/contact-centers", Title: "contact center",
			Offers: []string{"voice-contact-center"}, Reference: "CCX", Scaling: ScaleQuantity, QuantityField: "agent_count", SetupFee: 150000,
			Features: []string{"intelligent_routing", "real_time_analytics", "call_recording", "quality_monitoring", "workforce_management"}},
		{Kind: KindCloudInfrastructure, Category: "cloud", Collection: "/services/cloud/infrastructure", Title: "cloud infrastructure",
			Offers: []string{"cloud-infrastructure"}, Reference: "CLD", QuantityField: "virtual_machines",
			Features: []string{"backup", "monitoring", "private_networking", "disaster_recovery"}},
		{Kind: KindCloudPlatform, Category: "cloud", Collection: "/services/cloud/platforms", Title: "cloud platform",
			Offers: []string{"cloud-platform"}, Reference: "PAS", QuantityField: "environments",
			Features: []string{"ci_cd", "autoscaling", "managed_database", "log_retention"}},
		{Kind: KindManagedSecurity, Category: "security", Collection: "/services/security/managed", Title: "managed security service",
			Offers: []string{"security-managed-soc"}, Reference: "SOC", SetupFee: 500000,
			Features: []string{"threat_hunting", "dark_web_monitoring", "phishing_simulation", "managed_edr"}},
		{Kind: KindSecurityInfrastructure, Category: "security", Collection: "/services/security/infrastructure", Title: "security infrastructure",
			Offers: []string{"security-firewall"}, Located: true, Bandwidth: "throughput", PublicIP: true, Reference: "FW",
			Scaling: ScaleBandwidth, QuantityField: "devices", SetupFee: 100000, SetupPerUnit: true,
			Features: []string{"ips", "url_filtering", "antivirus", "sandboxing", "ssl_inspection", "application_control", "geo_blocking"}},
		{Kind: KindAIPlatform, Category: "ai", Collection: "/services/ai/platforms", Title: "AI platform",
			Offers: []string{"ai-platform"}, Reference: "AIP", QuantityField: "models", SetupFee: 250000,
			Features: []string{"model_monitoring", "explainability", "auto_retraining", "private_endpoints"}},
	}
}

// KindProfiles returns the nine kinds of service, in catalog order.
func KindProfiles() []KindProfile { return kindProfiles() }

// LookupKind returns the profile of kind, and whether it exists.
func LookupKind(kind string) (KindProfile, bool) {
	for _, p := range kindProfiles() {
		if p.Kind == kind {
			return p, true
		}
	}
	return KindProfile{}, false
}

// KindNames returns the names of the kinds.
func KindNames() []string {
	var out []string
	for _, p := range kindProfiles() {
		out = append(out, p.Kind)
	}
	return out
}

// OrderContacts are the people to notify about a service (spec 2.2's contacts).
type OrderContacts struct {
	Technical string `json:"technical,omitempty" maxLength:"320" doc:"E-mail address of the technical contact, notified of provisioning, maintenance and decommission"`
	Billing   string `json:"billing,omitempty" maxLength:"320" doc:"E-mail address of the billing contact"`
}

// OrderExtras are the fields every category body accepts besides the
// specification's (not in the specification).
type OrderExtras struct {
	Name     string         `json:"name,omitempty" maxLength:"200" doc:"The service's name; default: the catalog offer's name and size. Sandbox magic values: see docs/sandbox.md"`
	Contacts *OrderContacts `json:"contacts,omitempty" doc:"Who is notified about the service"`
}

func (e *OrderExtras) apply(o *ProvisioningOrder) {
	o.Name = strings.TrimSpace(e.Name)
	if e.Contacts != nil {
		o.TechnicalContact, o.BillingContact = strings.TrimSpace(e.Contacts.Technical), strings.TrimSpace(e.Contacts.Billing)
	}
}

// KindBody is the create body of one kind of service. Its prepare method
// validates the kind's own fields into an order.
type KindBody interface {
	// ServiceKind returns the kind the body creates.
	ServiceKind() string
	prepare(p *orderPrep, o *ProvisioningOrder) error
}

// orderPrep is the context of validating a body: the store, the caller's
// environment, where issues go, and whether it is a quote (where missing
// fields are listed, not refused).
type orderPrep struct {
	ctx     context.Context
	s       *Store
	env     models.Environment
	v       *models.Validator
	quote   bool
	missing []string
}

// required records field as missing unless ok: an issue for an order, a
// note for a quote. It returns ok.
func (p *orderPrep) required(ok bool, field string) bool {
	if ok {
		return true
	}
	if p.quote {
		p.missing = append(p.missing, field)
	} else {
		p.v.Add(field, "is required")
	}
	return false
}

// NewKindBody returns an empty create body of kind. Errors: VALIDATION_ERROR
// (unknown kind, reported under field).
func NewKindBody(field, kind string) (KindBody, error) {
	switch kind {
	case catalog.KindInternet:
		return &InternetBody{}, nil
	case catalog.KindNetwork:
		return &NetworkBody{}, nil
	case KindPhoneSystem:
		return &PhoneSystemBody{}, nil
	case KindContactCenter:
		return &ContactCenterBody{}, nil
	case KindCloudInfrastructure:
		return &CloudInfrastructureBody{}, nil
	case KindCloudPlatform:
		return &CloudPlatformBody{}, nil
	case KindManagedSecurity:
		return &ManagedSecurityBody{}, nil
	case KindSecurityInfrastructure:
		return &SecurityInfrastructureBody{}, nil
	case KindAIPlatform:
		return &AIPlatformBody{}, nil
	}
	return nil, models.Invalid(models.FieldIssue{Field: field, Issue: "must be one of " + strings.Join(KindNames(), ", ")})
}

// DecodeKindBody decodes spec (a JSON object) into the create body of kind,
// refusing unknown fields. Errors: VALIDATION_ERROR naming field.
func DecodeKindBody(field, kind string, spec map[string]any) (KindBody, error) {
	body, err := NewKindBody(field, kind)
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(spec)
	if err != nil {
		return nil, models.Invalid(models.FieldIssue{Field: field, Issue: "is not a JSON object"})
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(body); err != nil {
		return nil, models.Invalid(models.FieldIssue{Field: field, Issue: "is not a valid " + strings.ReplaceAll(kind, "_", " ") + " body: " + jsonIssue(err)})
	}
	return body, nil
}

// jsonIssue turns a decoding error into a client-safe issue.
func jsonIssue(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("%s must be %s", te.Field, te.Type.String())
	}
	msg := err.Error()
	if rest, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		return "unknown field " + rest
	}
	return "malformed"
}

func specOf(body KindBody) map[string]any {
	raw, err := json.Marshal(body)
	if err != nil {
		return nil
	}
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	delete(m, "account_id")
	delete(m, "name")
	delete(m, "contacts")
	return m
}

// PrepareServiceOrder validates the create body of any kind for principal p:
// the kind's fields (enums, formats, per-kind rules), the common fields,
// the billing account (default: the organization's oldest; required for
// internet), availability (bandwidth, compute, numbers), and conflicts; and
// prices it. It returns the order and the tenant scope it belongs to.
// Errors: VALIDATION_ERROR, LOCATION_NOT_SERVICEABLE,
// SERVICE_UNAVAILABLE_AT_LOCATION, INSUFFICIENT_BANDWIDTH, SERVICE_CONFLICT.
func (s *Store) PrepareServiceOrder(ctx context.Context, p *models.Principal, body KindBody) (*ProvisioningOrder, models.Scope, error) {
	o, err := s.OrderFromBody(ctx, p.Environment, body, false)
	if err != nil {
		return nil, models.Scope{}, err
	}
	var acct *models.BillingAccount
	if o.Kind != catalog.KindInternet {
		if o.AccountID == "" && p.IsStaff() {
			return nil, models.Scope{}, models.Invalid(models.FieldIssue{Field: "account_id", Issue: "is required when provider staff provision for a customer"})
		}
		if acct, err = s.defaultAccount(ctx, p, o); err != nil {
			return nil, models.Scope{}, err
		}
	}
	return s.completeOrder(ctx, p, o, acct)
}

// OrderFromBody validates body into an order (no account, availability or
// price yet). For a quote, missing fields are not errors: they are returned
// in the order's Spec under "_missing".
func (s *Store) OrderFromBody(ctx context.Context, env models.Environment, body KindBody, quote bool) (*ProvisioningOrder, error) {
	var v models.Validator
	prof, _ := LookupKind(body.ServiceKind())
	o := &ProvisioningOrder{
		Source: OrderFromCategory, Kind: prof.Kind, BillingCycle: "monthly", Redundancy: "none", Monitoring: "standard", Quantity: 1,
	}
	if prof.Kind == catalog.KindInternet {
		o.Source = OrderFromInternet
	}
	pr := &orderPrep{ctx: ctx, s: s, env: env, v: &v, quote: quote}
	if err := body.prepare(pr, o); err != nil {
		return nil, err
	}
	if o.CatalogServiceID == "" && prof.Kind != catalog.KindInternet {
		o.CatalogServiceID = prof.Offers[0]
	}
	if err := s.CheckOrderFields(ctx, &v, o); err != nil {
		return nil, err
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	o.Spec = specOf(body)
	if quote && len(pr.missing) > 0 {
		o.Spec["_missing"] = pr.missing
	}
	return o, nil
}

// MissingForProvisioning returns the fields a quoted order still lacks.
func (o *ProvisioningOrder) MissingForProvisioning() []string {
	switch m := o.Spec["_missing"].(type) {
	case []string:
		return m
	case []any:
		out := make([]string, 0, len(m))
		for _, x := range m {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// Validation helpers shared by the bodies.
var (
	svcIdentPattern    = regexp.MustCompile(`^[a-z][a-z0-9_]{0,39}$`)
	svcAreaCodePattern = regexp.MustCompile(`^[2-9][0-9]{2}$`)
	svcSizePattern     = regexp.MustCompile(`^(?i)([1-9][0-9]{0,5})\s?(GB|TB)$`)
	svcDurationPattern = regexp.MustCompile(`^([1-9][0-9]{0,3})_(minute|minutes|hour|hours)$`)
	svcEnvNamePattern  = regexp.MustCompile(`^[a-z][a-z0-9-]{0,29}$`)
	svcModelPattern    = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$`)
	svcHostnamePattern = regexp.MustCompile(`^(?i)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$`)
	svcRegionPattern   = regexp.MustCompile(`^[a-z]{2,10}(-[a-z0-9]{1,15}){1,3}$`)
)

// svcCheckList validates a list of values: each allowed (nil allows any
// identifier), no duplicates, between min and max items. It returns the
// list trimmed.
func CheckList(v *models.Validator, field string, got, allowed []string, minItems, maxItems int) []string {
	out := make([]string, 0, len(got))
	if len(got) < minItems {
		if minItems == 1 {
			v.Add(field, "must list at least one value")
		} else {
			v.Add(field, fmt.Sprintf("must list at least %d values", minItems))
		}
	}
	if len(got) > maxItems {
		v.Add(field, fmt.Sprintf("must list at most %d values", maxItems))
		return out
	}
	for i, x := range got {
		x = strings.TrimSpace(x)
		f := fmt.Sprintf("%s[%d]", field, i)
		switch {
		case allowed != nil && !slices.Contains(allowed, x):
			v.Add(f, "must be one of "+strings.Join(allowed, ", "))
		case allowed == nil && !svcIdentPattern.MatchString(x):
			v.Add(f, "must be a lowercase identifier (letters, digits, underscores; at most 40)")
		case slices.Contains(out, x):
			v.Add(f, fmt.Sprintf("%q is listed twice", x))
		default:
			out = append(out, x)
		}
	}
	return out
}

// ParseSizeGB parses a size written <n>GB or <n>TB into gigabytes.
// Errors: VALIDATION_ERROR naming field.
func ParseSizeGB(field, s string) (int, error) {
	m := svcSizePattern.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return 0, models.Invalid(models.FieldIssue{Field: field, Issue: "must be a size such as 16GB or 2TB"})
	}
	n, _ := strconv.Atoi(m[1])
	if strings.EqualFold(m[2], "TB") {
		n *= 1000
	}
	return n, nil
}

// ParseResponseTime parses <n>_minutes, <n>_hour or <n>_hours into a duration.
// Errors: VALIDATION_ERROR naming field.
func ParseResponseTime(field, s string) (time.Duration, error) {
	m := svcDurationPattern.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return 0, models.Invalid(models.FieldIssue{Field: field, Issue: "must be <n>_minutes, <n>_hour or <n>_hours, e.g. 15_minutes or 4_hours"})
	}
	n, _ := strconv.Atoi(m[1])
	if strings.HasPrefix(m[2], "hour") {
		return time.Duration(n) * time.Hour, nil
	}
	return time.Duration(n) * time.Minute, nil
}
