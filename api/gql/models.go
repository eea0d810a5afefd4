package gql

import "time"

// Service is a service in the graph; its operations and subscription are
// resolved (and batched) separately.
type Service struct {
	ID            string    `json:"id"`
	Name          string    `json:"name"`
	Kind          string    `json:"kind"`
	ServiceType   string    `json:"serviceType"`
	Status        string    `json:"status"`
	AccountID     string    `json:"accountId"`
	Bandwidth     string    `json:"bandwidth"`
	LocationID    string    `json:"locationId"`
	City          string    `json:"city"`
	State         string    `json:"state"`
	MonthlyCharge float64   `json:"monthlyCharge"`
	Currency      string    `json:"currency"`
	CreatedAt     time.Time `json:"createdAt"`
	UpdatedAt     time.Time `json:"updatedAt"`
}

// Operation is a long-running operation; its service is resolved separately.
type Operation struct {
	ID         string     `json:"id"`
	Type       string     `json:"type"`
	Status     string     `json:"status"`
	ResourceID string     `json:"resourceId"`
	CreatedAt  time.Time  `json:"createdAt"`
	UpdatedAt  time.Time  `json:"updatedAt"`
	FinishedAt *time.Time `json:"finishedAt"`
}

// Subscription is a billing subscription; its service and invoices are
// resolved separately.
type Subscription struct {
	ID                 string    `json:"id"`
	AccountID          string    `json:"accountId"`
	ServiceID          string    `json:"serviceId"`
	Status             string    `json:"status"`
	BillingCycle       string    `json:"billingCycle"`
	Quantity           int       `json:"quantity"`
	UnitPrice          float64   `json:"unitPrice"`
	Currency           string    `json:"currency"`
	CurrentPeriodStart time.Time `json:"currentPeriodStart"`
	CurrentPeriodEnd   time.Time `json:"currentPeriodEnd"`
	CreatedAt          time.Time `json:"createdAt"`
}

// Invoice is an invoice; its payments are resolved separately.
type Invoice struct {
	ID             string     `json:"id"`
	Number         string     `json:"number"`
	Status         string     `json:"status"`
	AccountID      string     `json:"accountId"`
	SubscriptionID *string    `json:"subscriptionId"`
	Currency       string     `json:"currency"`
	Subtotal       float64    `json:"subtotal"`
	Tax            float64    `json:"tax"`
	Total          float64    `json:"total"`
	AmountPaid     float64    `json:"amountPaid"`
	IssuedAt       time.Time  `json:"issuedAt"`
	DueDate        time.Time  `json:"dueDate"`
	PaidAt         *time.Time `json:"paidAt"`
	CreatedAt      time.Time  `json:"createdAt"`
}

// Payment is a payment; its invoice is resolved separately.
type Payment struct {
	ID          string     `json:"id"`
	InvoiceID   string     `json:"invoiceId"`
	AccountID   string     `json:"accountId"`
	Amount      float64    `json:"amount"`
	Currency    string     `json:"currency"`
	Status      string     `json:"status"`
	MethodType  string     `json:"methodType"`
	ProcessedAt *time.Time `json:"processedAt"`
	CreatedAt   time.Time  `json:"createdAt"`
}

// Ticket is a support ticket; its comments are resolved separately.
type Ticket struct {
	ID              string    `json:"id"`
	Number          string    `json:"number"`
	Title           string    `json:"title"`
	Status          string    `json:"status"`
	Priority        string    `json:"priority"`
	Category        string    `json:"category"`
	ServiceAffected *string   `json:"serviceAffected"`
	CreatedAt       time.Time `json:"createdAt"`
	UpdatedAt       time.Time `json:"updatedAt"`
}
