package gql

// setComplexity prices the list fields: a connection costs its selections
// times the edges it may return (first, default 50), a nested list its
// selections times its first (default 10); other fields cost 1 plus their
// selections (gqlgen's default).
func setComplexity(c *ComplexityRoot) {
	conn := func(child int, first *int) int { return child * count(first, defaultFirst) }
	nested := func(child int, first *int) int { return child * count(first, nestedFirst) }
	list := func(child int, first *int, _ *string, _ *string) int { return conn(child, first) }
	listNoFilter := func(child int, first *int, _ *string) int { return conn(child, first) }
	c.Query.Services = list
	c.Query.Operations = list
	c.Query.Invoices = list
	c.Query.Payments = list
	c.Query.Tickets = list
	c.Query.Events = list
	c.Query.Subscriptions = listNoFilter
	c.Query.Webhooks = listNoFilter
	c.Service.Operations = nested
	c.Subscription.Invoices = nested
	c.Invoice.Payments = nested
	c.Ticket.Comments = nested
}

// count is the items a list field may return for first (at least 1).
func count(first *int, def int) int {
	if first == nil {
		return def
	}
	return max(1, *first)
}
