// Package payments is the card side of billing: the Gateway interface
// through which the platform charges tokenised cards, a simulator of it
// that answers the test tokens of docs/billing.md, and the Processor that
// pays invoices through a gateway (from the API and from auto-pay).
//
// Card numbers never reach the platform: clients tokenise cards with the
// payment form and send tokens (tok_...); the gateway describes a token
// (brand, last four digits, expiry) and charges it.
package payments

import (
	"context"
	"strings"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/billing"
)

// ChargeRequest asks the gateway to charge a card token.
type ChargeRequest struct {
	// PaymentID is the platform's payment (pay_); the gateway uses it as
	// its idempotency key, so a retried charge is charged once.
	PaymentID   string
	Token       string
	Amount      models.Money
	Currency    string
	Description string
}

// Gateway is a card payment gateway.
type Gateway interface {
	// Describe returns the card behind a token.
	// Errors: VALIDATION_ERROR (unknown or unusable token).
	Describe(ctx context.Context, token string) (billing.Card, error)
	// Charge charges a token. A refusal (insufficient funds, declined card,
	// processing error) is an outcome, not an error; an error means the
	// gateway could not be reached (the payment then fails with
	// processing_error). Charging the same PaymentID again returns the
	// first outcome.
	Charge(ctx context.Context, req ChargeRequest) (billing.PaymentOutcome, error)
}

// Test tokens answered by the Simulator (docs/billing.md, docs/sandbox.md).
const (
	TokenVisa              = "tok_visa"
	TokenMastercard        = "tok_mastercard"
	TokenAmex              = "tok_amex"
	TokenInsufficientFunds = "tok_insufficient_funds"
	TokenDeclined          = "tok_declined"
	TokenProcessingError   = "tok_processing_error"
)

// InsufficientFundsAvailable is what the tok_insufficient_funds card has:
// charges up to this amount succeed, larger ones fail with insufficient_funds.
const InsufficientFundsAvailable = models.Money(10_00)

type testCard struct {
	card    billing.Card
	outcome string // "" succeeds; otherwise the failure code
}

// testCards returns the Simulator's cards by token (a new map per call).
func testCards() map[string]testCard {
	return map[string]testCard{
		TokenVisa:              {card: billing.Card{Brand: "visa", Last4: "4242", ExpMonth: 12, ExpYear: 2034}},
		TokenMastercard:        {card: billing.Card{Brand: "mastercard", Last4: "4444", ExpMonth: 12, ExpYear: 2034}},
		TokenAmex:              {card: billing.Card{Brand: "amex", Last4: "8431", ExpMonth: 12, ExpYear: 2034}},
		TokenInsufficientFunds: {card: billing.Card{Brand: "visa", Last4: "9995", ExpMonth: 12, ExpYear: 2034}, outcome: billing.FailureInsufficientFunds},
		TokenDeclined:          {card: billing.Card{Brand: "visa", Last4: "0002", ExpMonth: 12, ExpYear: 2034}, outcome: billing.FailureCardDeclined},
		TokenProcessingError:   {card: billing.Card{Brand: "visa", Last4: "0119", ExpMonth: 12, ExpYear: 2034}, outcome: billing.FailureProcessingError},
	}
}

// TestTokens returns the tokens the Simulator knows, sorted as documented.
func TestTokens() []string {
	return []string{TokenVisa, TokenMastercard, TokenAmex, TokenInsufficientFunds, TokenDeclined, TokenProcessingError}
}

// Simulator is the platform's gateway: no money moves. It knows the test
// tokens, answers each deterministically, and derives the transaction id
// from the payment id, so a repeated charge returns the same outcome.
type Simulator struct{}

// NewSimulator returns the simulated gateway.
func NewSimulator() *Simulator { return &Simulator{} }

var _ Gateway = (*Simulator)(nil)

// Describe returns the test card of token. Errors: VALIDATION_ERROR.
func (*Simulator) Describe(_ context.Context, token string) (billing.Card, error) {
	c, ok := testCards()[strings.TrimSpace(token)]
	if !ok {
		return billing.Card{}, models.Invalid(models.FieldIssue{Field: "card_token", Issue: "is not a token the payment gateway knows (see docs/billing.md for the test tokens)"})
	}
	return c.card, nil
}

// Charge answers the test token's outcome.
func (g *Simulator) Charge(ctx context.Context, req ChargeRequest) (billing.PaymentOutcome, error) {
	c, ok := testCards()[strings.TrimSpace(req.Token)]
	if !ok {
		return billing.PaymentOutcome{FailureCode: billing.FailureCardDeclined, FailureMessage: "unknown card token"}, nil
	}
	switch c.outcome {
	case billing.FailureInsufficientFunds:
		if req.Amount > InsufficientFundsAvailable {
			avail := InsufficientFundsAvailable
			return billing.PaymentOutcome{FailureCode: c.outcome, FailureMessage: "the card has insufficient funds", Available: &avail}, nil
		}
	case billing.FailureCardDeclined:
		return billing.PaymentOutcome{FailureCode: c.outcome, FailureMessage: "the card issuer declined the charge"}, nil
	case billing.FailureProcessingError:
		return billing.PaymentOutcome{FailureCode: c.outcome, FailureMessage: "the card network reported a processing error"}, nil
	}
	return billing.PaymentOutcome{Succeeded: true, TransactionID: "txn_" + strings.TrimPrefix(req.PaymentID, models.PrefixPayment+"_")}, nil
}
