package billing

import "github.com/telcoplatform/platform/models/filter"

// InvoiceFilterSchema is the fields the invoice list's filter= expression
// may name (docs/filtering.md): amount is the invoice's total, and the
// money fields take amounts with at most two decimals (100.50); an unpaid
// invoice has a null paid_at.
func InvoiceFilterSchema() filter.Schema {
	text := []filter.Op{filter.Eq, filter.Ne, filter.In, filter.NotIn}
	optional := []filter.Op{filter.Eq, filter.Ne, filter.In, filter.NotIn, filter.IsNull, filter.IsNotNull}
	return filter.Schema{
		"status":          {Column: "status", Type: filter.Enum, Values: []string{string(InvoicePending), string(InvoicePaid), string(InvoiceOverdue), string(InvoiceCancelled)}},
		"number":          {Column: "number", Type: filter.String, Operators: text},
		"account_id":      {Column: "account_id", Type: filter.String, Operators: text},
		"source":          {Column: "source", Type: filter.String, Operators: text},
		"subscription_id": {Column: "NULLIF(subscription_id, '')", Type: filter.String, Nullable: true, Operators: optional},
		"currency":        {Column: "currency", Type: filter.String, Operators: text},
		"amount":          {Column: "total", Type: filter.Money},
		"subtotal":        {Column: "subtotal", Type: filter.Money},
		"tax":             {Column: "tax", Type: filter.Money},
		"amount_paid":     {Column: "amount_paid", Type: filter.Money},
		"issued_at":       {Column: "issued_at", Type: filter.Time},
		"due_date":        {Column: "due_date", Type: filter.Time},
		"paid_at":         {Column: "paid_at", Type: filter.Time, Nullable: true},
		"created_at":      {Column: "created_at", Type: filter.Time},
		"updated_at":      {Column: "updated_at", Type: filter.Time},
	}
}

// PaymentFilterSchema is the fields the payment list's filter= expression
// may name (docs/filtering.md): amount is money (100.50), method the
// payment method's type, and a payment not yet processed has a null
// processed_at.
func PaymentFilterSchema() filter.Schema {
	text := []filter.Op{filter.Eq, filter.Ne, filter.In, filter.NotIn}
	return filter.Schema{
		"status":       {Column: "status", Type: filter.Enum, Values: []string{string(PaymentProcessing), string(PaymentSuccessful), string(PaymentFailed)}},
		"amount":       {Column: "amount", Type: filter.Money},
		"currency":     {Column: "currency", Type: filter.String, Operators: text},
		"method":       {Column: "method_type", Type: filter.String, Operators: text},
		"invoice_id":   {Column: "invoice_id", Type: filter.String, Operators: text},
		"account_id":   {Column: "account_id", Type: filter.String, Operators: text},
		"source":       {Column: "source", Type: filter.String, Operators: text},
		"created_at":   {Column: "created_at", Type: filter.Time},
		"processed_at": {Column: "processed_at", Type: filter.Time, Nullable: true},
	}
}
