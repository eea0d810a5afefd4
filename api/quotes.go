package api

import (
	"context"
	"net/http"
	"strconv"

	"github.com/danielgtaylor/huma/v2"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/quotes"
	"github.com/telcoplatform/platform/models/services"
)

// BillingPreferencesBody is the quote request's billing_preferences.
type BillingPreferencesBody struct {
	Cycle string `json:"cycle,omitempty" maxLength:"20" example:"monthly" doc:"monthly (default), quarterly or annual"`
	Term  string `json:"term,omitempty" maxLength:"20" example:"36_months" doc:"<n>_months, 1 to 60 (default 1): 5 % off recurring charges from 12 months, 10 % from 24, 15 % from 36"`
}

// QuoteBody is the quote request, plus the billing account.
type QuoteBody struct {
	Services           []map[string]any        `json:"services" required:"true" minItems:"1" maxItems:"50" example:"[{\"type\":\"internet\",\"bandwidth\":\"1gbps\",\"location\":\"loc_austin_congress\"}]" doc:"Required: 1 to 50 services, each {type, ...} where type is a kind (internet, network, phone_system, contact_center, cloud_infrastructure, cloud_platform, managed_security, security_infrastructure, ai_platform), a service type or a catalog offer id, and the other fields are the kind's create body; shorthand: bandwidth, location (a location id or \"address, city, ST zip\"), users, features, quantity"`
	BillingPreferences *BillingPreferencesBody `json:"billing_preferences,omitempty"`
	AccountID          string                  `json:"account_id,omitempty" maxLength:"64" doc:"Billing account; default: the organization's oldest"`
}

// QuoteLineItem is one line of a quoted service's price.
type QuoteLineItem struct {
	Description string       `json:"description"`
	Quantity    int          `json:"quantity"`
	Unit        string       `json:"unit"`
	UnitPrice   models.Money `json:"unit_price"`
	Monthly     models.Money `json:"monthly"`
	OneTime     models.Money `json:"one_time"`
}

// QuotePricingItem totals a quoted service.
type QuotePricingItem struct {
	MonthlySubtotal models.Money `json:"monthly_subtotal"`
	Discount        models.Money `json:"discount" doc:"Term discount on the recurring charges"`
	Monthly         models.Money `json:"monthly"`
	OneTime         models.Money `json:"one_time"`
}

// QuoteServiceItem is one service of a quote.
type QuoteServiceItem struct {
	Index                  int              `json:"index"`
	Type                   string           `json:"type" example:"internet"`
	ServiceType            string           `json:"service_type" example:"fiber_dedicated"`
	CatalogServiceID       string           `json:"catalog_service_id"`
	Name                   string           `json:"name"`
	Quantity               int              `json:"quantity"`
	Bandwidth              string           `json:"bandwidth,omitempty"`
	SLA                    string           `json:"sla"`
	Features               []string         `json:"features"`
	Specification          map[string]any   `json:"specification" doc:"The service as quoted: its kind's create body"`
	Lines                  []QuoteLineItem  `json:"lines"`
	Pricing                QuotePricingItem `json:"pricing"`
	MissingForProvisioning []string         `json:"missing_for_provisioning" doc:"Fields it still lacks to be provisioned from the quote"`
	ServiceID              string           `json:"service_id,omitempty" doc:"Once ordered: the service"`
	RequestID              string           `json:"request_id,omitempty" doc:"Once ordered: the provisioning operation"`
}

// QuoteTotalsItem totals a quote.
type QuoteTotalsItem struct {
	OneTime         models.Money `json:"one_time"`
	MonthlySubtotal models.Money `json:"monthly_subtotal"`
	MonthlyDiscount models.Money `json:"monthly_discount"`
	Monthly         models.Money `json:"monthly"`
	PerBillingCycle models.Money `json:"per_billing_cycle"`
	TermTotal       models.Money `json:"term_total" doc:"monthly × term + one_time"`
}

// QuoteDocument is a quote (quo_).
type QuoteDocument struct {
	ID              string             `json:"id" example:"quo_3fK9aZ"`
	Status          string             `json:"status" enum:"open,ordered,expired"`
	AccountID       string             `json:"account_id"`
	Currency        string             `json:"currency" example:"USD"`
	BillingCycle    string             `json:"billing_cycle"`
	Term            string             `json:"term" example:"36_months"`
	TermMonths      int                `json:"term_months"`
	DiscountPercent int                `json:"discount_percent"`
	Services        []QuoteServiceItem `json:"services"`
	Totals          QuoteTotalsItem    `json:"totals"`
	CreatedAt       string             `json:"created_at"`
	ExpiresAt       string             `json:"expires_at"`
	ProvisionURL    string             `json:"provision_url" doc:"POST here with {quote_id, quote_item} to order a service of the quote"`
}

// QuoteOutput wraps one quote.
type QuoteOutput struct {
	Status int
	Body   struct {
		Envelope
		Quote QuoteDocument `json:"quote"`
	}
}

func (s *Server) quoteOutput(q *quotes.Quote, status int) *QuoteOutput {
	out := &QuoteOutput{Status: status}
	out.Body.Quote = QuoteDocument{
		ID: q.ID, Status: q.StatusAt(s.now()), AccountID: q.AccountID, Currency: q.Currency, BillingCycle: q.BillingCycle,
		Term: strconv.Itoa(q.TermMonths) + "_months", TermMonths: q.TermMonths, DiscountPercent: q.DiscountPercent,
		Services: mapSlice(q.Items, func(it *quotes.QuoteItem) QuoteServiceItem {
			return QuoteServiceItem{Index: it.Index, Type: it.Type, ServiceType: it.ServiceType, CatalogServiceID: it.CatalogServiceID, Name: it.Name,
				Quantity: it.Quantity, Bandwidth: it.Bandwidth, SLA: it.SLA, Features: nonNil(it.Features), Specification: orEmpty(it.Spec),
				Lines: mapSlice(it.Lines, func(l *services.PriceLine) QuoteLineItem {
					return QuoteLineItem{Description: l.Description, Quantity: l.Quantity, Unit: l.Unit, UnitPrice: l.UnitPrice, Monthly: l.Monthly, OneTime: l.OneTime}
				}),
				Pricing:                QuotePricingItem{MonthlySubtotal: it.MonthlySubtotal, Discount: it.Discount, Monthly: it.Monthly, OneTime: it.OneTime},
				MissingForProvisioning: nonNil(it.Missing), ServiceID: it.ServiceID, RequestID: it.RequestID}
		}),
		Totals: QuoteTotalsItem{OneTime: q.OneTimeTotal, MonthlySubtotal: q.MonthlySubtotal, MonthlyDiscount: q.MonthlyDiscount, Monthly: q.MonthlyTotal,
			PerBillingCycle: q.CycleTotal, TermTotal: q.TermTotal},
		CreatedAt: models.Timestamp(q.CreatedAt), ExpiresAt: models.Timestamp(q.ExpiresAt), ProvisionURL: s.cfg.PublicBaseURL + "/v1/services/provision",
	}
	return out
}

// registerQuotes registers /services/quotes. Fixed paths: call before registerServices.
func (s *Server) registerQuotes() {
	tags := []string{"Services: quotes"}
	register(s, huma.Operation{OperationID: "create-quote", Method: http.MethodPost, Path: "/services/quotes",
		Summary: "Quote services", Tags: tags, DefaultStatus: http.StatusCreated,
		Description: "Prices the services of the quote request from the catalog: the offer's starting price, doubled for each " +
			"step up its bandwidth options, times the SLA tier (premium 125 %, enterprise 150 %) and the units, plus the kind's add-ons " +
			"and one-time setup fee; the term discount applies to recurring charges. Each service is validated as its kind's create " +
			"body; fields it still lacks to be provisioned are listed in missing_for_provisioning. Where a location is given, " +
			"availability there is checked (the 422s of the availability check). The quote is valid for 30 days; order a service of it " +
			"with POST /v1/services/provision {quote_id, quote_item}. See docs/services.md."},
		access{permission: "services:write"}, func(ctx context.Context, in *struct{ Body QuoteBody }) (*QuoteOutput, error) {
			b := in.Body
			qin := quotes.QuoteInput{Services: b.Services, AccountID: b.AccountID}
			if bp := b.BillingPreferences; bp != nil {
				qin.Cycle, qin.Term = bp.Cycle, bp.Term
			}
			q, err := s.quotes.CreateQuote(ctx, principal(ctx), qin)
			if err != nil {
				return nil, err
			}
			return s.quoteOutput(q, http.StatusCreated), nil
		})
	register(s, huma.Operation{OperationID: "get-quote", Method: http.MethodGet, Path: "/services/quotes/{quote_id}",
		Summary: "Get a quote", Tags: tags, Description: "A quote, with its status: open, ordered (every service ordered) or expired (30 days after it was made)."},
		access{permission: "services:read"}, func(ctx context.Context, in *struct {
			QuoteID string `path:"quote_id" maxLength:"40" example:"quo_3fK9aZ"`
		}) (*QuoteOutput, error) {
			q, err := s.quotes.GetQuote(ctx, principal(ctx), in.QuoteID)
			if err != nil {
				return nil, err
			}
			return s.quoteOutput(q, http.StatusOK), nil
		})
}
