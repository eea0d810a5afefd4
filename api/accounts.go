package api

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/telcoplatform/platform/models"
)

// AccountItem is a billing account as answered.
type AccountItem struct {
	ID             string       `json:"id" example:"acct_3fK9aZ"`
	OrganizationID string       `json:"organization_id"`
	Name           string       `json:"name"`
	Currency       string       `json:"currency" example:"USD"`
	BillingEmail   string       `json:"billing_email"`
	Balance        models.Money `json:"balance" example:"0.00"`
	Preferences    Preferences  `json:"preferences"`
	CreatedAt      string       `json:"created_at"`
	UpdatedAt      string       `json:"updated_at"`
}

// Preferences are an account's billing preferences (spec 2.3).
type Preferences struct {
	BillingCycle    string `json:"billing_cycle" example:"monthly"`
	AutoPay         bool   `json:"auto_pay"`
	PaymentMethodID string `json:"payment_method_id,omitempty"`
	InvoiceDelivery string `json:"invoice_delivery" example:"email"`
	Currency        string `json:"currency" example:"USD"`
}

func accountItem(a *models.BillingAccount) AccountItem {
	return AccountItem{
		ID: a.ID, OrganizationID: a.OrganizationID, Name: a.Name, Currency: a.Currency, BillingEmail: a.BillingEmail, Balance: a.Balance,
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

// AccountsOutput is a page of billing accounts.
type AccountsOutput struct {
	Body struct {
		Envelope
		Accounts   []AccountItem `json:"accounts"`
		Pagination Pagination    `json:"pagination"`
	}
}

func accountOutput(a *models.BillingAccount, status int) *AccountOutput {
	out := &AccountOutput{Status: status}
	out.Body.Account = accountItem(a)
	return out
}

func (s *Server) registerAccounts() {
	tags := []string{"Billing: accounts"}
	register(s, huma.Operation{OperationID: "create-billing-account", Method: http.MethodPost, Path: "/billing/accounts", Summary: "Create a billing account", Tags: tags, DefaultStatus: http.StatusCreated},
		access{permission: "billing:write"}, func(ctx context.Context, in *struct {
			Body struct {
				OrganizationID string `json:"organization_id,omitempty" maxLength:"64" doc:"Provider staff only"`
				Name           string `json:"name" maxLength:"200"`
				Currency       string `json:"currency" maxLength:"3" example:"USD"`
				BillingEmail   string `json:"billing_email" maxLength:"320" format:"email"`
			}
		}) (*AccountOutput, error) {
			a, err := s.store.CreateAccount(ctx, principal(ctx), models.AccountInput{OrganizationID: in.Body.OrganizationID, Name: in.Body.Name, Currency: in.Body.Currency, BillingEmail: in.Body.BillingEmail})
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
			accts, total, err := s.store.ListAccounts(ctx, principal(ctx), pr)
			if err != nil {
				return nil, err
			}
			out := &AccountsOutput{}
			out.Body.Accounts = mapSlice(accts, accountItem)
			out.Body.Pagination = newPagination(pr, total)
			return out, nil
		})
	register(s, huma.Operation{OperationID: "get-billing-account", Method: http.MethodGet, Path: "/billing/accounts/{account_id}", Summary: "Get a billing account", Tags: tags},
		access{permission: "billing:read"}, func(ctx context.Context, in *struct {
			ID string `path:"account_id" maxLength:"64"`
		}) (*AccountOutput, error) {
			a, err := s.store.GetAccount(ctx, principal(ctx), in.ID)
			if err != nil {
				return nil, err
			}
			return accountOutput(a, http.StatusOK), nil
		})
	register(s, huma.Operation{OperationID: "update-billing-preferences", Method: http.MethodPut, Path: "/billing/accounts/{account_id}/preferences", Summary: "Update billing preferences", Tags: tags},
		access{permission: "billing:write"}, func(ctx context.Context, in *struct {
			ID   string `path:"account_id" maxLength:"64"`
			Body struct {
				BillingCycle    *string `json:"billing_cycle,omitempty" enum:"monthly,quarterly,annual"`
				AutoPay         *bool   `json:"auto_pay,omitempty"`
				PaymentMethodID *string `json:"payment_method_id,omitempty" maxLength:"64"`
				InvoiceDelivery *string `json:"invoice_delivery,omitempty" enum:"email,portal,postal"`
				Currency        *string `json:"currency,omitempty" maxLength:"3"`
			}
		}) (*AccountOutput, error) {
			a, err := s.store.UpdatePreferences(ctx, principal(ctx), in.ID, models.PreferencesInput{
				BillingCycle: in.Body.BillingCycle, AutoPay: in.Body.AutoPay, PaymentMethodID: in.Body.PaymentMethodID,
				InvoiceDelivery: in.Body.InvoiceDelivery, Currency: in.Body.Currency,
			})
			if err != nil {
				return nil, err
			}
			return accountOutput(a, http.StatusOK), nil
		})
}
