package api

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/billing"
	"github.com/telcoplatform/platform/payments"
)

// BillingContact is who receives an account's invoices.
type BillingContact struct {
	Name  string `json:"name,omitempty"`
	Email string `json:"email" example:"billing@example.com"`
}

// AccountPlan is the organization's plan as billing sees it: the API
// requests included each month and the price of each request beyond them.
type AccountPlan struct {
	Name                    string  `json:"name" example:"business"`
	MonthlyIncludedRequests int64   `json:"monthly_included_requests" example:"500000" doc:"0: custom (negotiated)"`
	OveragePerRequest       float64 `json:"overage_price_per_request" example:"0.0008" doc:"USD per request beyond the included volume"`
	Currency                string  `json:"currency" example:"USD"`
}

// AccountItem is a billing account as answered.
type AccountItem struct {
	ID             string         `json:"id" example:"acct_3fK9aZ"`
	OrganizationID string         `json:"organization_id"`
	Name           string         `json:"name"`
	Currency       string         `json:"currency" example:"USD"`
	BillingEmail   string         `json:"billing_email"`
	BillingContact BillingContact `json:"billing_contact"`
	Balance        models.Money   `json:"balance" example:"0.00" doc:"What the account's open (pending and overdue) invoices still ask for"`
	TaxRate        models.Money   `json:"tax_rate" example:"8.25" doc:"Percent added as tax to the account's invoices"`
	Preferences    Preferences    `json:"preferences"`
	CreatedAt      string         `json:"created_at"`
	UpdatedAt      string         `json:"updated_at"`
}

// AccountDetailItem is one billing account with its payment methods, plan and dues.
type AccountDetailItem struct {
	AccountItem
	PaymentMethods []PaymentMethodItem `json:"payment_methods"`
	Plan           AccountPlan         `json:"plan"`
	OverdueAmount  models.Money        `json:"overdue_amount" doc:"Part of the balance that is overdue"`
	OpenInvoices   int64               `json:"open_invoices"`
}

// Preferences are an account's billing preferences.
type Preferences struct {
	BillingCycle    string `json:"billing_cycle" example:"monthly"`
	AutoPay         bool   `json:"auto_pay"`
	PaymentMethodID string `json:"payment_method_id,omitempty"`
	InvoiceDelivery string `json:"invoice_delivery" example:"email"`
	Currency        string `json:"currency" example:"USD"`
}

// AddressBody is a billing address.
type AddressBody struct {
	Street  string `json:"street" minLength:"1" maxLength:"200" example:"100 Congress Ave"`
	City    string `json:"city" minLength:"1" maxLength:"100" example:"Austin"`
	State   string `json:"state,omitempty" maxLength:"100"`
	Zip     string `json:"zip" minLength:"1" maxLength:"20" example:"78701"`
	Country string `json:"country" minLength:"2" maxLength:"2" example:"US" doc:"ISO 3166-1 alpha-2"`
}

func (a *AddressBody) input() *billing.BillingAddress {
	if a == nil {
		return nil
	}
	return &billing.BillingAddress{Street: a.Street, City: a.City, State: a.State, Zip: a.Zip, Country: a.Country}
}

// PaymentMethodBody is a card to charge: its token, never its number.
type PaymentMethodBody struct {
	Type           string       `json:"type,omitempty" enum:"credit_card,debit_card" maxLength:"20" example:"credit_card" doc:"credit_card (the default) or debit_card"`
	CardToken      string       `json:"card_token" required:"true" minLength:"1" maxLength:"80" example:"tok_visa" doc:"Required: the token of the payment form (test tokens in docs/billing.md)"`
	BillingAddress *AddressBody `json:"billing_address,omitempty" doc:"Optional with a payment's card (required when saving a card, see SavedCardBody)"`
}

// SavedCardBody is the card of POST /billing/accounts/{account_id}/payment-methods:
// a PaymentMethodBody whose billing address is required.
type SavedCardBody struct {
	Type           string       `json:"type,omitempty" enum:"credit_card,debit_card" maxLength:"20" example:"credit_card" doc:"credit_card (the default) or debit_card"`
	CardToken      string       `json:"card_token" required:"true" minLength:"1" maxLength:"80" example:"tok_visa" doc:"Required: the token of the payment form (test tokens in docs/billing.md)"`
	BillingAddress *AddressBody `json:"billing_address" required:"true" doc:"Required"`
}

func (b *PaymentMethodBody) input() *billing.PaymentMethodInput {
	if b == nil {
		return nil
	}
	return &billing.PaymentMethodInput{Type: b.Type, CardToken: b.CardToken, BillingAddress: b.BillingAddress.input()}
}

// PaymentMethodItem is a saved payment method: the card's brand, last four
// digits and expiry, never its number or token.
type PaymentMethodItem struct {
	ID             string                  `json:"id" example:"pm_3fK9aZ"`
	AccountID      string                  `json:"account_id"`
	Type           string                  `json:"type" example:"credit_card"`
	Brand          string                  `json:"brand,omitempty" example:"visa"`
	Last4          string                  `json:"last4,omitempty" example:"4242"`
	ExpMonth       int                     `json:"exp_month,omitempty" example:"12"`
	ExpYear        int                     `json:"exp_year,omitempty" example:"2034"`
	BillingAddress *billing.BillingAddress `json:"billing_address,omitempty"`
	Default        bool                    `json:"default" doc:"The account's payment_method_id (used by auto_pay)"`
	CreatedAt      string                  `json:"created_at"`
}

func paymentMethodItem(pm *billing.PaymentMethod, defaultID string) PaymentMethodItem {
	it := PaymentMethodItem{ID: pm.ID, AccountID: pm.AccountID, Type: pm.Type, Brand: pm.Brand, Last4: pm.Last4, ExpMonth: pm.ExpMonth,
		ExpYear: pm.ExpYear, Default: pm.ID == defaultID, CreatedAt: models.Timestamp(pm.CreatedAt)}
	if pm.BillingAddress != (billing.BillingAddress{}) {
		a := pm.BillingAddress
		it.BillingAddress = &a
	}
	return it
}

func accountItem(a *models.BillingAccount) AccountItem {
	return AccountItem{
		ID: a.ID, OrganizationID: a.OrganizationID, Name: a.Name, Currency: a.Currency, BillingEmail: a.BillingEmail, Balance: a.Balance,
		BillingContact: BillingContact{Name: a.ContactName, Email: a.BillingEmail}, TaxRate: models.Money(a.TaxRateBP),
		Preferences: Preferences{BillingCycle: a.BillingCycle, AutoPay: a.AutoPay, PaymentMethodID: a.PaymentMethodID, InvoiceDelivery: a.InvoiceDelivery, Currency: a.Currency},
		CreatedAt:   models.Timestamp(a.CreatedAt), UpdatedAt: models.Timestamp(a.UpdatedAt),
	}
}

// AccountOutput wraps one billing account.
type AccountOutput struct {
	Status int
	Body   struct {
		Envelope
		Account AccountItem `json:"account"`
	}
}

// AccountDetailOutput wraps one billing account with its details.
type AccountDetailOutput struct {
	Body struct {
		Envelope
		Account AccountDetailItem `json:"account"`
	}
}

// AccountsOutput is a page of billing accounts.
type AccountsOutput struct {
	Body struct {
		Envelope
		Accounts   []AccountItem `json:"accounts"`
		Pagination Pagination    `json:"pagination"`
	}
}

// PaymentMethodOutput wraps one payment method.
type PaymentMethodOutput struct {
	Status int
	Body   struct {
		Envelope
		PaymentMethod PaymentMethodItem `json:"payment_method"`
	}
}

// PaymentMethodsOutput lists an account's payment methods.
type PaymentMethodsOutput struct {
	Body struct {
		Envelope
		PaymentMethods []PaymentMethodItem `json:"payment_methods"`
		Pagination     Pagination          `json:"pagination"`
	}
}

func accountOutput(a *models.BillingAccount, status int) *AccountOutput {
	out := &AccountOutput{Status: status}
	out.Body.Account = accountItem(a)
	return out
}

type accountPath struct {
	ID string `path:"account_id" maxLength:"64" example:"acct_3fK9aZ"`
}

func (s *Server) registerAccounts() {
	tags := []string{"Billing: accounts"}
	proc := payments.NewProcessor(s.store, payments.NewSimulator(), s.log)
	register(s, huma.Operation{OperationID: "create-billing-account", Method: http.MethodPost, Path: "/billing/accounts", Summary: "Create a billing account", Tags: tags, DefaultStatus: http.StatusCreated},
		access{permission: "billing:write"}, func(ctx context.Context, in *struct {
			Body struct {
				OrganizationID     string        `json:"organization_id,omitempty" maxLength:"64" doc:"Provider staff only"`
				Name               string        `json:"name" maxLength:"200" example:"Main account"`
				Currency           string        `json:"currency" maxLength:"3" example:"USD"`
				BillingEmail       string        `json:"billing_email" maxLength:"320" format:"email" example:"billing@example.com"`
				BillingContactName string        `json:"billing_contact_name,omitempty" maxLength:"200"`
				TaxRate            *models.Money `json:"tax_rate,omitempty" minimum:"0" maximum:"100" example:"8.25" doc:"Percent of tax added to invoices (0 to 100, two decimals); provider staff only"`
			}
		}) (*AccountOutput, error) {
			a, err := s.billing.CreateAccount(ctx, principal(ctx), billing.AccountInput{OrganizationID: in.Body.OrganizationID, Name: in.Body.Name, Currency: in.Body.Currency,
				BillingEmail: in.Body.BillingEmail, ContactName: in.Body.BillingContactName, TaxRate: in.Body.TaxRate})
			if err != nil {
				return nil, err
			}
			return accountOutput(a, http.StatusCreated), nil
		})
	register(s, huma.Operation{OperationID: "list-billing-accounts", Method: http.MethodGet, Path: "/billing/accounts", Summary: "List billing accounts", Tags: tags},
		access{permission: "billing:read"}, func(ctx context.Context, in *struct{ ListParams }) (*AccountsOutput, error) {
			pr, err := in.page()
			if err != nil {
				return nil, err
			}
			accts, total, err := s.billing.ListAccounts(ctx, principal(ctx), pr)
			if err != nil {
				return nil, err
			}
			out := &AccountsOutput{}
			out.Body.Accounts = mapSlice(accts, accountItem)
			out.Body.Pagination = newPagination(pr, total)
			return out, nil
		})
	register(s, huma.Operation{OperationID: "get-billing-account", Method: http.MethodGet, Path: "/billing/accounts/{account_id}", Summary: "Get a billing account", Tags: tags,
		Description: "The account with its balance (what its open invoices still ask for), billing contact, preferences, payment methods and plan. See docs/billing.md."},
		access{permission: "billing:read"}, func(ctx context.Context, in *accountPath) (*AccountDetailOutput, error) {
			d, err := s.billing.GetAccountDetail(ctx, principal(ctx), in.ID)
			if err != nil {
				return nil, err
			}
			out := &AccountDetailOutput{}
			out.Body.Account = AccountDetailItem{AccountItem: accountItem(d.Account), OverdueAmount: d.OverdueAmount, OpenInvoices: d.OpenInvoices,
				Plan: AccountPlan{Name: string(d.Plan), MonthlyIncludedRequests: d.PlanLimits.MonthlyIncluded, OveragePerRequest: float64(d.PlanLimits.OverageMicros) / 1e6, Currency: "USD"}}
			out.Body.Account.PaymentMethods = mapSlice(d.PaymentMethods, func(pm *billing.PaymentMethod) PaymentMethodItem {
				return paymentMethodItem(pm, d.Account.PaymentMethodID)
			})
			return out, nil
		})
	register(s, huma.Operation{OperationID: "update-billing-preferences", Method: http.MethodPut, Path: "/billing/accounts/{account_id}/preferences", Summary: "Update billing preferences", Tags: tags,
		Description: "payment_method_id must be one of the account's payment methods; auto_pay needs one. The currency can change only while the account has no invoices and no subscriptions."},
		access{permission: "billing:write", mfa: true}, func(ctx context.Context, in *struct {
			ID   string `path:"account_id" maxLength:"64"`
			Body struct {
				BillingCycle    *string       `json:"billing_cycle,omitempty" enum:"monthly,quarterly,annual"`
				AutoPay         *bool         `json:"auto_pay,omitempty"`
				PaymentMethodID *string       `json:"payment_method_id,omitempty" maxLength:"64"`
				InvoiceDelivery *string       `json:"invoice_delivery,omitempty" enum:"email,portal,postal"`
				Currency        *string       `json:"currency,omitempty" maxLength:"3"`
				TaxRate         *models.Money `json:"tax_rate,omitempty" minimum:"0" maximum:"100" example:"8.25" doc:"Percent of tax added to new invoices (0 to 100, two decimals); provider staff only"`
			}
		}) (*AccountOutput, error) {
			a, err := s.billing.UpdatePreferences(ctx, principal(ctx), in.ID, billing.PreferencesInput{
				BillingCycle: in.Body.BillingCycle, AutoPay: in.Body.AutoPay, PaymentMethodID: in.Body.PaymentMethodID,
				InvoiceDelivery: in.Body.InvoiceDelivery, Currency: in.Body.Currency, TaxRate: in.Body.TaxRate,
			})
			if err != nil {
				return nil, err
			}
			return accountOutput(a, http.StatusOK), nil
		})

	register(s, huma.Operation{OperationID: "create-payment-method", Method: http.MethodPost, Path: "/billing/accounts/{account_id}/payment-methods",
		Summary: "Add a payment method", Tags: tags, DefaultStatus: http.StatusCreated,
		Description: "Saves a tokenised card (card_token from the payment form, never a card number) on the account. set_default also makes it the account's payment_method_id. Test tokens: docs/billing.md."},
		access{permission: "billing:write", sensitive: true}, func(ctx context.Context, in *struct {
			ID   string `path:"account_id" maxLength:"64" example:"acct_3fK9aZ"`
			Body struct {
				SavedCardBody
				SetDefault bool `json:"set_default,omitempty" doc:"Also make it the account's payment_method_id"`
			}
		}) (*PaymentMethodOutput, error) {
			pm, acct, err := proc.AddPaymentMethod(ctx, principal(ctx), in.ID, *(*PaymentMethodBody)(&in.Body.SavedCardBody).input(), in.Body.SetDefault)
			if err != nil {
				return nil, err
			}
			out := &PaymentMethodOutput{Status: http.StatusCreated}
			out.Body.PaymentMethod = paymentMethodItem(pm, acct.PaymentMethodID)
			return out, nil
		})
	register(s, huma.Operation{OperationID: "list-payment-methods", Method: http.MethodGet, Path: "/billing/accounts/{account_id}/payment-methods",
		Summary: "List payment methods", Tags: tags},
		access{permission: "billing:read"}, func(ctx context.Context, in *struct {
			ID string `path:"account_id" maxLength:"64" example:"acct_3fK9aZ"`
			ListParams
		}) (*PaymentMethodsOutput, error) {
			pr, err := in.page()
			if err != nil {
				return nil, err
			}
			acct, err := s.billing.GetAccount(ctx, principal(ctx), in.ID)
			if err != nil {
				return nil, err
			}
			pms, err := s.billing.ListPaymentMethods(ctx, principal(ctx), in.ID)
			if err != nil {
				return nil, err
			}
			page, pg := pageOf(pms, pr)
			out := &PaymentMethodsOutput{}
			out.Body.PaymentMethods = mapSlice(page, func(pm *billing.PaymentMethod) PaymentMethodItem { return paymentMethodItem(pm, acct.PaymentMethodID) })
			out.Body.Pagination = pg
			return out, nil
		})
	register(s, huma.Operation{OperationID: "delete-payment-method", Method: http.MethodDelete, Path: "/billing/accounts/{account_id}/payment-methods/{payment_method_id}",
		Summary: "Remove a payment method", Tags: tags, DefaultStatus: http.StatusNoContent,
		Description: "A method that auto_pay or an active subscription uses is 409 INVALID_STATE_TRANSITION until that changes."},
		access{permission: "billing:write", sensitive: true}, func(ctx context.Context, in *struct {
			ID              string `path:"account_id" maxLength:"64" example:"acct_3fK9aZ"`
			PaymentMethodID string `path:"payment_method_id" maxLength:"64" example:"pm_3fK9aZ"`
		}) (*struct{}, error) {
			if err := s.billing.RemovePaymentMethod(ctx, principal(ctx), in.ID, in.PaymentMethodID); err != nil {
				return nil, err
			}
			return &struct{}{}, nil
		})
}
