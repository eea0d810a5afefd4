package quotes

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/catalog"
	"github.com/telcoplatform/platform/models/services"
)

// Quote statuses: open until it expires (expired, computed) or every item
// has been ordered (ordered).
const (
	QuoteOpen    = "open"
	QuoteOrdered = "ordered"
	QuoteExpired = "expired"
)

// QuoteValidity is how long a quote's prices hold.
const QuoteValidity = 30 * 24 * time.Hour

// QuoteItem is one priced service of a quote.
type QuoteItem struct {
	Index            int                  `json:"index"`
	Type             string               `json:"type"`
	ServiceType      string               `json:"service_type"`
	CatalogServiceID string               `json:"catalog_service_id"`
	Name             string               `json:"name"`
	Quantity         int                  `json:"quantity"`
	Bandwidth        string               `json:"bandwidth,omitempty"`
	SLA              string               `json:"sla"`
	Features         []string             `json:"features"`
	Spec             map[string]any       `json:"spec"`
	Lines            []services.PriceLine `json:"lines"`
	MonthlySubtotal  models.Money         `json:"monthly_subtotal"`
	Discount         models.Money         `json:"discount"`
	Monthly          models.Money         `json:"monthly"`
	OneTime          models.Money         `json:"one_time"`
	Missing          []string             `json:"missing_for_provisioning"`
	ServiceID        string               `json:"service_id,omitempty"`
	RequestID        string               `json:"request_id,omitempty"`
}

// Quote is a priced offer for one or more services (quo_), valid for 30
// days.
type Quote struct {
	ID string `gorm:"primaryKey;size:40"`
	models.Tenant
	AccountID       string       `gorm:"size:40;not null;index"`
	Status          string       `gorm:"size:20;not null"`
	BillingCycle    string       `gorm:"size:20;not null"`
	TermMonths      int          `gorm:"not null"`
	DiscountPercent int          `gorm:"not null"`
	Currency        string       `gorm:"size:3;not null"`
	Items           []QuoteItem  `gorm:"serializer:json;type:text"`
	MonthlySubtotal models.Money `gorm:"not null"`
	MonthlyDiscount models.Money `gorm:"not null"`
	MonthlyTotal    models.Money `gorm:"not null"`
	OneTimeTotal    models.Money `gorm:"not null"`
	CycleTotal      models.Money `gorm:"not null"`
	TermTotal       models.Money `gorm:"not null"`
	CreatedBy       string       `gorm:"size:40"`
	ExpiresAt       time.Time    `gorm:"not null"`
	CreatedAt       time.Time
	UpdatedAt       time.Time
}

// StatusAt returns the quote's status at now (open becomes expired after ExpiresAt).
func (q *Quote) StatusAt(now time.Time) string {
	if q.Status == QuoteOpen && !now.Before(q.ExpiresAt) {
		return QuoteExpired
	}
	return q.Status
}

// QuoteInput is the quote request (spec 2.2) plus the billing account
// (default: the organization's oldest).
type QuoteInput struct {
	Services  []map[string]any
	Cycle     string
	Term      string
	AccountID string
}

var qtTermPattern = regexp.MustCompile(`^([1-9][0-9]?)_months?$`)

// qtCycleMonths is how many months a billing cycle covers.
func qtCycleMonths(cycle string) int {
	switch cycle {
	case "quarterly":
		return 3
	case "annual":
		return 12
	}
	return 1
}

// kindOfQuoteType resolves a quote item's type: a kind, a location service
// type (which also fixes the service type) or a catalog offer id.
func kindOfQuoteType(ctx context.Context, s *Store, typ string) (kind, serviceType string, ok bool) {
	if _, found := services.LookupKind(typ); found {
		return typ, "", true
	}
	if st, found := catalog.LookupServiceType(typ); found {
		return st.Kind, st.Name, true
	}
	for _, p := range services.KindProfiles() {
		if slices.Contains(p.Offers, typ) {
			for _, st := range catalog.ServiceTypes() {
				if st.CatalogServiceID == typ {
					return p.Kind, st.Name, true
				}
			}
			return p.Kind, "", true
		}
	}
	return "", "", false
}

// quoteAliases maps a quote item's shorthand fields (spec 2.2: bandwidth,
// location string, users, features) to its kind's body, and returns the
// body and the item's pricing overrides. Errors: VALIDATION_ERROR under field.
func (s *Store) quoteItemBody(ctx context.Context, env models.Environment, field string, item map[string]any) (services.KindBody, map[string]any, int, []string, error) {
	typ, _ := item["type"].(string)
	typ = strings.TrimSpace(typ)
	if typ == "" {
		return nil, nil, 0, nil, models.Invalid(models.FieldIssue{Field: field + ".type", Issue: "is required: a kind of service (" + strings.Join(services.KindNames(), ", ") + "), a service type or a catalog offer id"})
	}
	kind, serviceType, ok := kindOfQuoteType(ctx, s, typ)
	if !ok {
		return nil, nil, 0, nil, models.Invalid(models.FieldIssue{Field: field + ".type", Issue: "must be a kind of service (" + strings.Join(services.KindNames(), ", ") + "), a service type or a catalog offer id"})
	}
	spec := map[string]any{}
	for k, v := range item {
		if k != "type" {
			spec[k] = v
		}
	}
	var v models.Validator
	quantity := 0
	if q, has := spec["quantity"]; has {
		n, isNum := q.(float64)
		if !isNum || n != float64(int(n)) || n < 1 || n > 10000 {
			v.Add(field+".quantity", "must be a whole number from 1 to 10000")
		} else {
			quantity = int(n)
		}
		delete(spec, "quantity")
	}
	var features []string
	if f, has := spec["features"]; has && kind != services.KindPhoneSystem && kind != services.KindContactCenter && kind != services.KindSecurityInfrastructure {
		list, isList := f.([]any)
		if !isList {
			v.Add(field+".features", "must be a list of strings")
		}
		for _, x := range list {
			str, _ := x.(string)
			features = append(features, str)
		}
		prof, _ := services.LookupKind(kind)
		features = services.CheckList(&v, field+".features", features, prof.Features, 0, 20)
		delete(spec, "features")
	}
	for _, key := range []string{"users", "agent_count"} {
		// Given, a count is checked as when ordering; only a missing one is
		// priced at its default (0 is no default: it is refused).
		if n, isNum := spec[key].(float64); isNum && n < 1 {
			v.Add(field+"."+key, "must be at least 1")
		}
	}
	if users, has := spec["users"]; has && kind == services.KindContactCenter {
		spec["agent_count"] = users
		delete(spec, "users")
	}
	switch kind {
	case catalog.KindInternet, catalog.KindNetwork:
		if serviceType != "" {
			key := "service_type"
			if kind == catalog.KindNetwork {
				key = "network_type"
			}
			if _, given := spec[key]; !given {
				spec[key] = serviceType
			}
		}
	case services.KindSecurityInfrastructure:
		if bw, has := spec["bandwidth"]; has {
			spec["throughput"] = bw
			delete(spec, "bandwidth")
		}
	}
	if loc, isString := spec["location"].(string); isString {
		id, postal, err := parseLocationString(field+".location", loc)
		switch {
		case err != nil:
			v.Add(field+".location", `must be a location id (loc_...) or "address, city, ST zip", e.g. "100 Congress Ave, Austin, TX 78701"`)
			delete(spec, "location")
		case kind == services.KindSecurityInfrastructure && id != "":
			delete(spec, "location")
			spec["location_id"] = id
		case kind == catalog.KindInternet && id != "":
			l, err := s.catalog.LocationByID(ctx, env, field+".location", id)
			if err != nil {
				return nil, nil, 0, nil, err
			}
			in := l.Input()
			spec["location"] = map[string]any{"address": in.Address, "city": in.City, "state": in.State, "zip": in.Zip}
		case kind == catalog.KindInternet || kind == services.KindSecurityInfrastructure:
			spec["location"] = map[string]any{"address": postal.Address, "city": postal.City, "state": postal.State, "zip": postal.Zip}
		default:
			v.Add(field+".location", fmt.Sprintf("a %s is not ordered at a location", strings.ReplaceAll(kind, "_", " ")))
			delete(spec, "location")
		}
	}
	if err := v.Err(); err != nil {
		return nil, nil, 0, nil, err
	}
	body, err := services.DecodeKindBody(field, kind, spec)
	if err != nil {
		return nil, nil, 0, nil, err
	}
	return body, spec, quantity, features, nil
}

// parseLocationString reads a location written as a string: a location id
// (loc_...) or "address, city, ST zip" (the format of bulk provisioning).
// Errors: VALIDATION_ERROR under field.
func parseLocationString(field, s string) (string, *catalog.LocationInput, error) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, catalog.PrefixLocation+"_") {
		if !models.HasPrefix(s, catalog.PrefixLocation) {
			return "", nil, models.Invalid(models.FieldIssue{Field: field, Issue: "is not a location id"})
		}
		return s, nil, nil
	}
	parts := strings.Split(s, ",")
	if len(parts) >= 3 {
		last := strings.Fields(parts[len(parts)-1])
		if len(last) == 2 {
			in := catalog.LocationInput{Address: strings.Join(parts[:len(parts)-2], ","), City: parts[len(parts)-2], State: last[0], Zip: last[1]}
			var v models.Validator
			in.Validate(&v, field)
			if err := v.Err(); err != nil {
				return "", nil, err
			}
			n := in.Normalize()
			return "", &n, nil
		}
	}
	return "", nil, models.Invalid(models.FieldIssue{Field: field, Issue: "must be a location id or an address"})
}

// qtPrefixFields rewrites a validation error's fields under prefix.
func qtPrefixFields(err error, prefix string) error {
	e := models.AsError(err)
	if e.Code != models.CodeValidation {
		return e.WithDetail("item", prefix)
	}
	issues, _ := e.Details["fields"].([]models.FieldIssue)
	out := make([]models.FieldIssue, len(issues))
	for i, is := range issues {
		f := is.Field
		if !strings.HasPrefix(f, prefix) {
			f = prefix + "." + f
		}
		out[i] = models.FieldIssue{Field: f, Issue: is.Issue}
	}
	return models.Invalid(out...)
}
