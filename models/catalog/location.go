package catalog

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/telcoplatform/platform/models"
)

// PrefixLocation is the prefix of serviceable location identifiers (loc_).
const PrefixLocation = "loc"

// ServiceableLocation is a site the network reaches: reference data shared by
// every tenant. What it offers, and how much bandwidth is left, is in
// LocationCapacity (one row per service type and environment).
type ServiceableLocation struct {
	ID       string `gorm:"primaryKey;size:60" json:"id"`
	Address  string `gorm:"size:200;not null" json:"address"`
	City     string `gorm:"size:100;not null" json:"city"`
	State    string `gorm:"size:2;not null" json:"state"`
	Zip      string `gorm:"size:10;not null;index" json:"zip"`
	MatchKey string `gorm:"size:400;not null;uniqueIndex" json:"-"`
	// SandboxOnly locations exist only in the test environment (docs/sandbox.md).
	SandboxOnly bool `gorm:"not null;default:false" json:"sandbox_only,omitempty"`
	// FailAtStep is a sandbox magic value: in the test environment, orders at
	// this location fail at the named provisioning step.
	FailAtStep string    `gorm:"size:40" json:"fail_at_step,omitempty"`
	CreatedAt  time.Time `json:"-"`
	UpdatedAt  time.Time `json:"-"`
}

// LocationInput is a postal location as clients send it (spec 2.1, 2.2).
type LocationInput struct {
	Address string `json:"address" minLength:"1" example:"100 Congress Ave"`
	City    string `json:"city" minLength:"1" example:"Austin"`
	State   string `json:"state" minLength:"2" example:"TX" doc:"Two-letter US state or territory code"`
	Zip     string `json:"zip" minLength:"5" example:"78701" doc:"12345 or 12345-6789"`
}

// ServiceTypeInfo describes a service type that locations offer: its kind
// (internet, network) and the catalog offer that sells it.
type ServiceTypeInfo struct {
	Name             string `json:"service_type"`
	Kind             string `json:"kind"`
	CatalogServiceID string `json:"catalog_service_id"`
}

// Service kinds that can be provisioned at a location.
const (
	KindInternet = "internet"
	KindNetwork  = "network"
)

// serviceTypes is read-only reference data: the service types that
// locations offer, in display order.
var serviceTypes = []ServiceTypeInfo{
	{Name: "fiber_dedicated", Kind: KindInternet, CatalogServiceID: "internet-fiber-dedicated"},
	{Name: "fiber_business", Kind: KindInternet, CatalogServiceID: "internet-fiber-business"},
	{Name: "mpls", Kind: KindNetwork, CatalogServiceID: "network-mpls"},
	{Name: "sdwan", Kind: KindNetwork, CatalogServiceID: "network-sdwan"},
}

// ServiceTypes returns every service type that locations can offer.
func ServiceTypes() []ServiceTypeInfo { return slices.Clone(serviceTypes) }

// LookupServiceType returns the service type called name, and whether it exists.
func LookupServiceType(name string) (ServiceTypeInfo, bool) {
	for _, st := range serviceTypes {
		if st.Name == name {
			return st, true
		}
	}
	return ServiceTypeInfo{}, false
}

// ServiceTypeNames returns the names of the service types of kind ("" for all).
func ServiceTypeNames(kind string) []string {
	var out []string
	for _, st := range serviceTypes {
		if kind == "" || st.Kind == kind {
			out = append(out, st.Name)
		}
	}
	return out
}

var (
	// ZipPattern is a US ZIP code: 12345 or 12345-6789.
	ZipPattern       = regexp.MustCompile(`^[0-9]{5}(-[0-9]{4})?$`)
	bandwidthPattern = regexp.MustCompile(`^([1-9][0-9]{0,5})(mbps|gbps)$`)
	// USStates are the two-letter codes of the US states and territories.
	USStates = strings.Fields("AL AK AZ AR CA CO CT DE DC FL GA HI ID IL IN IA KS KY LA ME MD MA MI MN MS MO MT NE NV NH NJ NM NY NC ND OH OK OR PA RI SC SD TN TX UT VT VA WA WV WI WY PR GU VI AS MP")
)

// ParseBandwidth parses a bandwidth written as a number followed by mbps or
// gbps in lowercase (spec 2.1), e.g. "500mbps" or "1gbps", into Mbit/s.
// Errors: VALIDATION_ERROR naming field.
func ParseBandwidth(field, s string) (int, error) {
	n, issue := CheckBandwidth(s)
	if issue != "" {
		return 0, models.Invalid(models.FieldIssue{Field: field, Issue: issue})
	}
	return n, nil
}

// CheckBandwidth parses a bandwidth into Mbit/s, or says what is wrong with
// it: its form, or its range (1mbps to 400gbps).
func CheckBandwidth(s string) (int, string) {
	m := bandwidthPattern.FindStringSubmatch(s)
	if m == nil {
		return 0, "must be a number followed by mbps or gbps in lowercase, e.g. 500mbps or 1gbps"
	}
	n, _ := strconv.Atoi(m[1])
	if m[2] == "gbps" {
		n *= 1000
	}
	if n > 400_000 {
		return 0, fmt.Sprintf("%s is out of the supported range: bandwidth goes from 1mbps to 400gbps", s)
	}
	return n, ""
}

// FormatBandwidth returns mbps written the way the API writes bandwidth:
// "10gbps" for whole gigabits, "500mbps" otherwise.
func FormatBandwidth(mbps int) string {
	if mbps >= 1000 && mbps%1000 == 0 {
		return strconv.Itoa(mbps/1000) + "gbps"
	}
	return strconv.Itoa(mbps) + "mbps"
}

// Normalize trims the fields, upper-cases the state and returns the copy.
func (in LocationInput) Normalize() LocationInput {
	return LocationInput{
		Address: strings.Join(strings.Fields(in.Address), " "),
		City:    strings.Join(strings.Fields(in.City), " "),
		State:   strings.ToUpper(strings.TrimSpace(in.State)),
		Zip:     strings.TrimSpace(in.Zip),
	}
}

// Validate records the issues of a location under field prefix (e.g.
// "location"): address and city required, state a US state or territory
// code, zip 12345 or 12345-6789.
func (in LocationInput) Validate(v *models.Validator, prefix string) {
	n := in.Normalize()
	v.Check(n.Address != "" && len(n.Address) <= 200, prefix+".address", "is required, at most 200 characters")
	v.Check(n.City != "" && len(n.City) <= 100, prefix+".city", "is required, at most 100 characters")
	v.Check(slices.Contains(USStates, n.State), prefix+".state", "must be a two-letter US state or territory code, e.g. TX")
	v.Check(ZipPattern.MatchString(n.Zip), prefix+".zip", "must be a ZIP code: 5 digits, optionally -4 more (12345 or 12345-6789)")
}

// addressWords maps common spellings to the USPS abbreviation, so that
// "100 Congress Avenue" and "100 congress ave." match the same site.
var addressWords = map[string]string{
	"street": "st", "avenue": "ave", "av": "ave", "boulevard": "blvd", "road": "rd", "drive": "dr",
	"lane": "ln", "court": "ct", "place": "pl", "parkway": "pkwy", "highway": "hwy", "suite": "ste",
	"north": "n", "south": "s", "east": "e", "west": "w", "square": "sq", "terrace": "ter", "way": "way",
}

// LocationMatchKey returns the key under which a location is matched: the
// normalised address, city and state and the 5-digit ZIP code.
func LocationMatchKey(in LocationInput) string {
	norm := func(s string) string {
		s = strings.ToLower(s)
		s = strings.NewReplacer(".", " ", ",", " ", "#", " ").Replace(s)
		words := strings.Fields(s)
		for i, w := range words {
			if abbr, ok := addressWords[w]; ok {
				words[i] = abbr
			}
		}
		return strings.Join(words, " ")
	}
	zip := strings.TrimSpace(in.Zip)
	if len(zip) > 5 {
		zip = zip[:5]
	}
	return norm(in.Address) + "|" + norm(in.City) + "|" + strings.ToUpper(strings.TrimSpace(in.State)) + "|" + zip
}

// Input returns the location as a client sends it.
func (l *ServiceableLocation) Input() LocationInput {
	return LocationInput{Address: l.Address, City: l.City, State: l.State, Zip: l.Zip}
}

// visibleIn reports whether the location exists in environment env.
func (l *ServiceableLocation) visibleIn(env models.Environment) bool {
	return !l.SandboxOnly || env == models.EnvTest
}

func notServiceable(in LocationInput) *models.Error {
	n := in.Normalize()
	return models.Errorf(models.CodeLocationNotServiceable, "the location %s, %s, %s %s is outside the service area", n.Address, n.City, n.State, n.Zip).
		WithDetail("location", n)
}

// FindLocation returns the serviceable location at the postal location in,
// as seen from environment env. Errors: VALIDATION_ERROR (malformed
// location), LOCATION_NOT_SERVICEABLE. It reads the reference data kept in
// memory (ReferenceTTL).
func (s *Store) FindLocation(ctx context.Context, env models.Environment, in LocationInput) (*ServiceableLocation, error) {
	var v models.Validator
	in.Validate(&v, "location")
	if err := v.Err(); err != nil {
		return nil, err
	}
	ref, err := s.reference(ctx)
	if err != nil {
		return nil, err
	}
	loc, ok := ref.locations[ref.byMatch[LocationMatchKey(in)]]
	if !ok || !loc.visibleIn(env) {
		return nil, notServiceable(in)
	}
	return &loc, nil
}

// LocationByID returns the serviceable location id as seen from environment
// env. Errors: VALIDATION_ERROR (unknown id, reported under field). It reads
// the reference data kept in memory (ReferenceTTL).
func (s *Store) LocationByID(ctx context.Context, env models.Environment, field, id string) (*ServiceableLocation, error) {
	ref, err := s.reference(ctx)
	if err != nil {
		return nil, err
	}
	loc, ok := ref.locations[id]
	if !ok || !loc.visibleIn(env) {
		return nil, models.Invalid(models.FieldIssue{Field: field, Issue: fmt.Sprintf("no serviceable location %q", id)})
	}
	return &loc, nil
}

// AvailabilityQuery asks what a location offers: a postal location (or a
// location id), the service types of interest (all when empty) and an
// optional bandwidth requirement.
type AvailabilityQuery struct {
	Location     LocationInput
	LocationID   string
	ServiceTypes []string
	Bandwidth    string
}

// ServiceAvailability is the answer for one service type at a location.
type ServiceAvailability struct {
	Type             ServiceTypeInfo
	Offered          bool        // the location offers the type at all
	AvailableMbps    int         // capacity left (0 when not offered)
	Available        bool        // offered, and the requirement (if any) fits
	Reason           models.Code // SERVICE_UNAVAILABLE_AT_LOCATION or INSUFFICIENT_BANDWIDTH when not Available
	BandwidthOptions []string    // the catalog's options that fit in what is left
	SLAOptions       []string
	MaxBandwidth     string // the largest bandwidth that can be ordered now ("" when none)
}

// AvailabilityReport is what a location offers, per requested service type.
type AvailabilityReport struct {
	Location      *ServiceableLocation
	RequestedMbps int // 0 when no bandwidth was asked for
	Services      []ServiceAvailability
	all           []ServiceAvailability // every type the location offers, for alternatives
}

// Alternative is an entry of SERVICE_UNAVAILABLE_AT_LOCATION's
// details.alternatives (spec 7).
type Alternative struct {
	ServiceType string `json:"service_type"`
	Available   bool   `json:"available"`
	// Bandwidth is the largest bandwidth that can be ordered now ("" when
	// none, and for resources counted in units: compute, numbers).
	Bandwidth string `json:"bandwidth"`
	// Region or AreaCode names where the same resource is offered instead
	// (a compute pool in another region, numbers in another area code), and
	// Free how many units or numbers are left there; empty for another
	// service type at the same location.
	Region   string `json:"region,omitempty"`
	AreaCode string `json:"area_code,omitempty"`
	Free     *int   `json:"free,omitempty"`
}

// Alternatives returns the other service types the location offers (those
// not in exclude), with whether they fit the requirement and the largest
// bandwidth left.
func (r *AvailabilityReport) Alternatives(exclude ...string) []Alternative {
	out := []Alternative{}
	for _, a := range r.all {
		if !a.Offered || slices.Contains(exclude, a.Type.Name) {
			continue
		}
		out = append(out, Alternative{ServiceType: a.Type.Name, Available: a.Available, Bandwidth: a.MaxBandwidth})
	}
	return out
}

// Find returns the entry for service type name.
func (r *AvailabilityReport) Find(name string) (ServiceAvailability, bool) {
	for _, a := range r.all {
		if a.Type.Name == name {
			return a, true
		}
	}
	return ServiceAvailability{}, false
}

// Require returns nil when service type name can be ordered at the location
// with the report's bandwidth requirement. Errors:
// SERVICE_UNAVAILABLE_AT_LOCATION (details: service_type, location,
// alternatives), INSUFFICIENT_BANDWIDTH (details: service_type, requested,
// available).
func (r *AvailabilityReport) Require(name string) error {
	a, _ := r.Find(name)
	switch {
	case a.Available:
		return nil
	case !a.Offered:
		return models.Errorf(models.CodeUnavailableAtLocation, "%s is not offered at %s, %s", name, r.Location.Address, r.Location.City).
			WithDetail("service_type", name).WithDetail("location", r.Location.Input()).
			WithDetail("location_id", r.Location.ID).WithDetail("alternatives", r.Alternatives(name))
	default:
		return models.Errorf(models.CodeInsufficientBandwidth, "%s at %s, %s has %s left; %s was requested", name, r.Location.Address, r.Location.City,
			FormatBandwidth(a.AvailableMbps), FormatBandwidth(r.RequestedMbps)).
			WithDetail("service_type", name).WithDetail("location_id", r.Location.ID).
			WithDetail("requested", FormatBandwidth(r.RequestedMbps)).WithDetail("available", FormatBandwidth(a.AvailableMbps)).
			WithDetail("alternatives", r.Alternatives(name))
	}
}

// Check returns nil when at least one requested service type is available.
// Otherwise: SERVICE_UNAVAILABLE_AT_LOCATION when none of the requested types
// is offered there (details.alternatives lists what is), or
// INSUFFICIENT_BANDWIDTH when some are offered but none has the bandwidth.
func (r *AvailabilityReport) Check() error {
	anyOffered := false
	for _, a := range r.Services {
		if a.Available {
			return nil
		}
		anyOffered = anyOffered || a.Offered
	}
	if len(r.Services) == 1 {
		return r.Require(r.Services[0].Type.Name)
	}
	names := make([]string, len(r.Services))
	for i, a := range r.Services {
		names[i] = a.Type.Name
	}
	if anyOffered {
		return models.Errorf(models.CodeInsufficientBandwidth, "none of %s has %s left at %s, %s", strings.Join(names, ", "), FormatBandwidth(r.RequestedMbps), r.Location.Address, r.Location.City).
			WithDetail("service_types", names).WithDetail("location_id", r.Location.ID).
			WithDetail("requested", FormatBandwidth(r.RequestedMbps)).WithDetail("alternatives", r.Alternatives(names...))
	}
	return models.Errorf(models.CodeUnavailableAtLocation, "none of %s is offered at %s, %s", strings.Join(names, ", "), r.Location.Address, r.Location.City).
		WithDetail("service_type", names[0]).WithDetail("service_types", names).WithDetail("location", r.Location.Input()).
		WithDetail("location_id", r.Location.ID).WithDetail("alternatives", r.Alternatives(names...))
}

// CheckAvailability answers what a location offers, as seen from scope (its
// environment; in the sandbox also its organization, see LocationCapacity),
// per requested service type (every type when none is named). It fails only
// when the question is malformed or the location is outside the service
// area; use Check or Require on the report for the per-type errors.
// Errors: VALIDATION_ERROR, LOCATION_NOT_SERVICEABLE.
func (s *Store) CheckAvailability(ctx context.Context, scope models.Scope, q AvailabilityQuery) (*AvailabilityReport, error) {
	env := scope.Environment
	var v models.Validator
	if q.LocationID == "" {
		q.Location.Validate(&v, "location")
	}
	v.Check(len(q.ServiceTypes) <= 20, "service_types", "must list at most 20 service types")
	for i, name := range q.ServiceTypes {
		_, ok := LookupServiceType(name)
		v.Check(ok, fmt.Sprintf("service_types[%d]", i), "must be one of "+strings.Join(ServiceTypeNames(""), ", "))
	}
	requested := 0
	if q.Bandwidth != "" {
		mbps, issue := CheckBandwidth(q.Bandwidth)
		if issue != "" {
			v.Add("bandwidth_requirements", issue)
		}
		requested = mbps
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	var loc *ServiceableLocation
	var err error
	if q.LocationID != "" {
		loc, err = s.LocationByID(ctx, env, "location_id", q.LocationID)
	} else {
		loc, err = s.FindLocation(ctx, env, q.Location)
	}
	if err != nil {
		return nil, err
	}
	db := s.In(ctx, models.SystemScope())
	var caps []LocationCapacity
	if err := db.Where("location_id = ? AND environment = ?", loc.ID, env).Find(&caps).Error; err != nil {
		return nil, models.DBErr(err)
	}
	var held map[string]int // in one organization's sandbox: what it holds here, by service type (one read for every type)
	if sandboxTenant(scope) && len(caps) > 0 {
		if held, err = heldMbpsByType(s.In(ctx, models.TenantScope(scope.OrganizationID, models.EnvTest)), loc.ID); err != nil {
			return nil, models.DBErr(err)
		}
	}
	ref, err := s.reference(ctx)
	if err != nil {
		return nil, err
	}
	report := &AvailabilityReport{Location: loc, RequestedMbps: requested}
	for _, st := range serviceTypes {
		a := ServiceAvailability{Type: st, BandwidthOptions: []string{}, SLAOptions: []string{}}
		for i := range caps {
			if caps[i].ServiceType == st.Name {
				a.Offered, a.AvailableMbps = true, capacityLeft(scope, &caps[i], held[st.Name])
			}
		}
		offer, _ := ref.offer(st.CatalogServiceID)
		if offer.SLAOptions != nil {
			a.SLAOptions = offer.SLAOptions
		}
		if a.Offered {
			for _, opt := range offer.BandwidthOptions {
				if mbps, err := ParseBandwidth("", opt); err == nil && mbps <= a.AvailableMbps {
					a.BandwidthOptions = append(a.BandwidthOptions, opt)
				}
			}
			if n := len(a.BandwidthOptions); n > 0 {
				a.MaxBandwidth = a.BandwidthOptions[n-1]
			}
			a.Available = a.AvailableMbps > 0 && a.MaxBandwidth != "" && a.AvailableMbps >= requested
		}
		switch {
		case !a.Offered:
			a.Reason = models.CodeUnavailableAtLocation
		case !a.Available:
			a.Reason = models.CodeInsufficientBandwidth
		}
		report.all = append(report.all, a)
		if len(q.ServiceTypes) == 0 || slices.Contains(q.ServiceTypes, st.Name) {
			if len(q.ServiceTypes) == 0 && !a.Offered {
				continue
			}
			report.Services = append(report.Services, a)
		}
	}
	if len(report.Services) == 0 {
		return nil, notServiceable(loc.Input())
	}
	return report, nil
}
