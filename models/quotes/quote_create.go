package quotes

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/catalog"
	"github.com/telcoplatform/platform/models/operations"
	"github.com/telcoplatform/platform/models/services"
)

// CreateQuote validates a quote request for principal p and stores the
// quote: each service is validated as its kind's create body, except that
// fields it still lacks to be provisioned are listed
// (missing_for_provisioning) rather than refused; where a location is
// given, availability there is checked; each is priced from the catalog
// (PriceOrder) with the term discount of billing_preferences.term (1 to 60
// months, default 1), and the quote expires after 30 days.
// Errors: VALIDATION_ERROR, LOCATION_NOT_SERVICEABLE,
// SERVICE_UNAVAILABLE_AT_LOCATION, INSUFFICIENT_BANDWIDTH.
func (s *Store) CreateQuote(ctx context.Context, p *models.Principal, in QuoteInput) (*Quote, error) {
	var v models.Validator
	v.Check(len(in.Services) >= 1 && len(in.Services) <= 50, "services", "must list 1 to 50 services")
	cycle := services.OrDefault(strings.TrimSpace(in.Cycle), "monthly")
	v.Check(slices.Contains(models.BillingCycles, cycle), "billing_preferences.cycle", "must be monthly, quarterly or annual")
	term, termOK := 1, true
	if t := strings.TrimSpace(in.Term); t != "" {
		m := qtTermPattern.FindStringSubmatch(t)
		if m == nil {
			v.Add("billing_preferences.term", "must be <n>_months with n from 1 to 60, e.g. 36_months")
			termOK = false
		} else if n, _ := strconv.Atoi(m[1]); n > 60 {
			v.Add("billing_preferences.term", "must be at most 60_months")
			termOK = false
		} else {
			term = n
		}
	}
	if months := qtCycleMonths(cycle); termOK && slices.Contains(models.BillingCycles, cycle) && months > term {
		// A cycle longer than the contract would bill beyond it (a
		// per-cycle total above the term's).
		v.Add("billing_preferences.cycle", fmt.Sprintf("must not be longer than the term: a %s cycle is %d months, the term %d", cycle, months, term))
	}
	accountID := strings.TrimSpace(in.AccountID)
	if accountID != "" {
		v.Check(models.HasPrefix(accountID, models.PrefixAccount), "account_id", "must be a billing account id (acct_...)")
	} else if p.IsStaff() {
		v.Add("account_id", "is required when provider staff quote for a customer")
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	acct, err := s.services.OrderAccount(ctx, p, accountID)
	if err != nil {
		return nil, err
	}
	scope := models.TenantScope(acct.OrganizationID, p.Environment)
	now := s.Now()
	q := &Quote{ID: models.NewID(models.PrefixQuote), AccountID: acct.ID, Status: QuoteOpen, BillingCycle: cycle, TermMonths: term,
		DiscountPercent: services.TermDiscountPercent(term), CreatedBy: p.ID, ExpiresAt: now.Add(QuoteValidity)}
	var issues []models.FieldIssue
	for i, item := range in.Services {
		field := fmt.Sprintf("services[%d]", i)
		qi, err := s.quoteItem(ctx, scope, field, item, term)
		if err != nil {
			if models.ErrorCode(err) == models.CodeValidation {
				issues = append(issues, models.AsError(qtPrefixFields(err, field)).Details["fields"].([]models.FieldIssue)...)
				continue
			}
			return nil, models.AsError(err).WithDetail("item", i)
		}
		qi.Index = i
		if q.Currency == "" {
			q.Currency = qi.currency
		}
		q.Items = append(q.Items, qi.QuoteItem)
		q.MonthlySubtotal += qi.MonthlySubtotal
		q.MonthlyDiscount += qi.Discount
		q.MonthlyTotal += qi.Monthly
		q.OneTimeTotal += qi.OneTime
	}
	if len(issues) > 0 {
		return nil, models.Invalid(issues...)
	}
	q.CycleTotal = q.MonthlyTotal * models.Money(qtCycleMonths(cycle))
	q.TermTotal = q.MonthlyTotal*models.Money(term) + q.OneTimeTotal
	if err := s.In(ctx, scope).Create(q).Error; err != nil {
		return nil, models.DBErr(err)
	}
	return q, nil
}

type pricedItem struct {
	QuoteItem
	currency string
}

// quoteItem validates and prices one service of a quote.
func (s *Store) quoteItem(ctx context.Context, scope models.Scope, field string, item map[string]any, term int) (*pricedItem, error) {
	body, spec, quantity, features, err := s.quoteItemBody(ctx, scope.Environment, field, item)
	if err != nil {
		return nil, err
	}
	o, err := s.services.OrderFromBody(ctx, scope.Environment, body, true)
	if err != nil {
		return nil, err
	}
	missing := o.MissingForProvisioning()
	if quantity > 0 && (o.Kind == services.KindPhoneSystem || o.Kind == services.KindContactCenter) {
		return nil, models.Invalid(models.FieldIssue{Field: "quantity", Issue: "give users (or agent_count) instead"})
	}
	switch {
	case quantity > 1 && (o.Kind == catalog.KindInternet || o.Kind == services.KindManagedSecurity):
		// One unit per service (docs/services.md): a quantity would price
		// several where one is delivered.
		return nil, models.Invalid(models.FieldIssue{Field: "quantity", Issue: "a " + o.Kind + " service is one unit: quote one item per service"})
	case quantity > 0 && o.Kind == services.KindAIPlatform:
		return nil, models.Invalid(models.FieldIssue{Field: "quantity", Issue: "give models instead: an AI platform is priced by its models"})
	}
	if quantity > 0 {
		o.Quantity = quantity
	}
	if len(features) > 0 {
		o.Features = features
	}
	located := o.Profile().Located && (o.LocationID != "" || o.Location != (catalog.LocationInput{}))
	if located || len(o.Compute) > 0 || len(o.Numbers) > 0 || len(o.Sites) > 0 {
		if err := s.services.CheckOrderAvailability(ctx, scope, o); err != nil {
			return nil, err
		}
	}
	price, err := s.services.PriceOrder(ctx, o, term)
	if err != nil {
		return nil, err
	}
	if features != nil {
		spec["features"] = features
	}
	if quantity > 0 {
		spec["quantity"] = quantity
	}
	return &pricedItem{currency: price.Currency, QuoteItem: QuoteItem{
		Type: o.Kind, ServiceType: o.ServiceType, CatalogServiceID: o.CatalogServiceID, Name: o.Name, Quantity: max(o.Quantity, 1),
		Bandwidth: o.Bandwidth, SLA: o.SLA, Features: svcStrings(o.Features), Spec: spec, Lines: price.Lines,
		MonthlySubtotal: price.MonthlySubtotal, Discount: price.Discount, Monthly: price.Monthly, OneTime: price.OneTime, Missing: svcStrings(missing),
	}}, nil
}

func svcStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// GetQuote returns one quote visible to p. Errors: NOT_FOUND.
func (s *Store) GetQuote(ctx context.Context, p *models.Principal, id string) (*Quote, error) {
	var q Quote
	err := s.In(ctx, p.Scope()).Where("id = ?", id).Take(&q).Error
	return &q, models.NotFoundOr(err, "quote")
}

// QuoteOrderInput provisions one service of a quote (POST
// /services/provision with quote_id): the quote's item, the schedule, the
// contacts and a name.
type QuoteOrderInput struct {
	QuoteID          string
	Item             *int
	Name             string
	PreferredDate    *time.Time
	Flexibility      string
	TechnicalContact string
	BillingContact   string
}

// PrepareQuoteOrder validates provisioning one item of a quote for principal
// p: the quote exists (VALIDATION_ERROR on quote_id otherwise), is open and
// not expired, the item exists and is complete, and was not ordered
// already (unless that order failed); then the item is validated as its
// kind's create body, with the quote's account and at the quote's prices.
// Errors: VALIDATION_ERROR, INVALID_STATE_TRANSITION (quote expired, or
// ordered and the item's provisioning did not fail), SERVICE_CONFLICT (item
// already ordered), and PrepareServiceOrder's.
func (s *Store) PrepareQuoteOrder(ctx context.Context, p *models.Principal, in QuoteOrderInput) (*services.ProvisioningOrder, models.Scope, error) {
	q, err := s.GetQuote(ctx, p, strings.TrimSpace(in.QuoteID))
	if models.ErrorCode(err) == models.CodeNotFound {
		return nil, models.Scope{}, models.Invalid(models.FieldIssue{Field: "quote_id", Issue: fmt.Sprintf("no quote %s", in.QuoteID)})
	}
	if err != nil {
		return nil, models.Scope{}, err
	}
	refused := func(st string) error {
		return models.Errorf(models.CodeInvalidStateTransition, "quote %s is %s; request a new quote", q.ID, st).WithDetail("status", st).
			WithDetail("expires_at", models.Timestamp(q.ExpiresAt))
	}
	now := s.Now()
	if !now.Before(q.ExpiresAt) {
		return nil, models.Scope{}, refused(QuoteExpired)
	}
	if st := q.StatusAt(now); st != QuoteOpen && st != QuoteOrdered {
		return nil, models.Scope{}, refused(st)
	}
	idx := 0
	switch {
	case in.Item != nil:
		idx = *in.Item
		if idx < 0 || idx >= len(q.Items) {
			return nil, models.Scope{}, models.Invalid(models.FieldIssue{Field: "quote_item", Issue: fmt.Sprintf("must be from 0 to %d", len(q.Items)-1)})
		}
	case len(q.Items) > 1:
		return nil, models.Scope{}, models.Invalid(models.FieldIssue{Field: "quote_item", Issue: fmt.Sprintf("is required: the quote has %d services (0 to %d)", len(q.Items), len(q.Items)-1)})
	}
	item := q.Items[idx]
	scope := models.TenantScope(q.OrganizationID, q.Environment)
	if err := s.checkQuoteItemFree(ctx, scope, q, idx); err != nil {
		if q.Status == QuoteOrdered && models.ErrorCode(err) == models.CodeServiceConflict {
			// Every service ordered: only one whose provisioning failed may
			// be ordered again (while the prices hold).
			return nil, models.Scope{}, refused(QuoteOrdered)
		}
		return nil, models.Scope{}, err
	}
	if len(item.Missing) > 0 {
		issues := make([]models.FieldIssue, len(item.Missing))
		for i, f := range item.Missing {
			issues[i] = models.FieldIssue{Field: fmt.Sprintf("quote.services[%d].%s", idx, f), Issue: "is required to provision; request a new quote with it"}
		}
		return nil, models.Scope{}, models.Invalid(issues...)
	}
	spec := map[string]any{}
	var features []string
	for k, v := range item.Spec {
		switch k {
		case "quantity":
		case "features":
			if item.Type != services.KindPhoneSystem && item.Type != services.KindContactCenter && item.Type != services.KindSecurityInfrastructure {
				features = item.Features
				continue
			}
			spec[k] = v
		default:
			spec[k] = v
		}
	}
	spec["account_id"] = q.AccountID
	if in.Name != "" {
		spec["name"] = in.Name
	}
	body, err := services.DecodeKindBody("quote", item.Type, spec)
	if err != nil {
		return nil, models.Scope{}, err
	}
	o, err := s.services.OrderFromBody(ctx, p.Environment, body, false)
	if err != nil {
		return nil, models.Scope{}, qtPrefixFields(err, fmt.Sprintf("quote.services[%d]", idx))
	}
	o.Source, o.QuoteID, o.QuoteItem = services.OrderFromQuote, q.ID, idx
	o.Quantity = item.Quantity
	if features != nil {
		o.Features = features
	}
	o.MonthlyCharge, o.OneTimeCharge, o.Currency, o.TermMonths = item.Monthly, item.OneTime, q.Currency, q.TermMonths
	o.PreferredDate, o.Flexibility = in.PreferredDate, strings.TrimSpace(in.Flexibility)
	o.TechnicalContact, o.BillingContact = strings.TrimSpace(in.TechnicalContact), strings.TrimSpace(in.BillingContact)
	var v models.Validator
	if err := s.services.CheckOrderFields(ctx, &v, o); err != nil {
		return nil, models.Scope{}, err
	}
	if err := v.Err(); err != nil {
		return nil, models.Scope{}, err
	}
	return s.services.CompleteOrder(ctx, p, o)
}

// checkQuoteItemFree returns SERVICE_CONFLICT when item idx of q was
// ordered and that service did not fail.
func (s *Store) checkQuoteItemFree(ctx context.Context, scope models.Scope, q *Quote, idx int) error {
	item := q.Items[idx]
	if item.ServiceID == "" {
		return nil
	}
	svc, err := s.services.ServiceIn(ctx, scope, item.ServiceID)
	if models.ErrorCode(err) == models.CodeNotFound {
		var op operations.Operation
		err := s.In(ctx, scope).Where("id = ?", item.RequestID).Take(&op).Error
		if errors.Is(err, gorm.ErrRecordNotFound) || (err == nil && (op.Status == operations.OpFailed || op.Status == operations.OpCancelled)) {
			return nil
		}
		if err != nil {
			return models.DBErr(err)
		}
	} else if err != nil {
		return err
	} else if svc.Status == services.ServiceFailed {
		return nil
	}
	return models.Errorf(models.CodeServiceConflict, "service %d of quote %s was already ordered as %s", idx, q.ID, item.ServiceID).
		WithDetail("existing_service_id", item.ServiceID).WithDetail("request_id", item.RequestID)
}

// ClaimQuoteItem records that item idx of quote id is being ordered as
// service serviceID by operation opID, unless someone else did it first.
// When every item is ordered the quote becomes ordered.
// Errors: NOT_FOUND, SERVICE_CONFLICT.
func (s *Store) ClaimQuoteItem(ctx context.Context, scope models.Scope, id string, idx int, serviceID, opID string) error {
	return services.ErrOrNil(s.Tx(ctx, scope, func(tx *gorm.DB) error {
		var q Quote
		if err := tx.Clauses(clause.Locking{Strength: "UPDATE"}).Where("id = ?", id).Take(&q).Error; err != nil {
			return models.NotFoundOr(err, "quote")
		}
		if idx < 0 || idx >= len(q.Items) {
			return models.NotFound("quote item")
		}
		if err := s.checkQuoteItemFree(ctx, scope, &q, idx); err != nil {
			return err
		}
		q.Items[idx].ServiceID, q.Items[idx].RequestID = serviceID, opID
		all := true
		for _, it := range q.Items {
			all = all && it.ServiceID != ""
		}
		if all {
			q.Status = QuoteOrdered
		}
		return models.DBErr(tx.Model(&q).Select("items", "status", "updated_at").Updates(&q).Error)
	}))
}

// ReleaseQuoteItem forgets the claim of operation opID on a quote item
// (its workflow could not be started).
func (s *Store) ReleaseQuoteItem(ctx context.Context, scope models.Scope, id string, idx int, opID string) error {
	return services.ErrOrNil(s.Tx(ctx, scope, func(tx *gorm.DB) error {
		var q Quote
		if err := tx.Clauses(clause.Locking{Strength: "UPDATE"}).Where("id = ?", id).Take(&q).Error; err != nil {
			return models.NotFoundOr(err, "quote")
		}
		if idx < 0 || idx >= len(q.Items) || q.Items[idx].RequestID != opID {
			return nil
		}
		q.Items[idx].ServiceID, q.Items[idx].RequestID = "", ""
		q.Status = QuoteOpen
		return models.DBErr(tx.Model(&q).Select("items", "status", "updated_at").Updates(&q).Error)
	}))
}
