package builder

import (
	"github.com/telcoplatform/platform/models/billing"
	"github.com/telcoplatform/platform/models/filter"
	"github.com/telcoplatform/platform/models/operations"
	"github.com/telcoplatform/platform/models/services"
	"github.com/telcoplatform/platform/models/support"
)

// cols writes a select list of table alias a's columns under their names.
func cols(a string, names ...string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = a + "." + n + " AS " + n
	}
	return out
}

// servicesDataset is the services, by creation time.
func servicesDataset() dataset {
	schema := services.ServiceFilterSchema()
	schema["category"] = filter.Field{Column: "category", Type: filter.Enum, Values: categories()}
	schema["currency"] = filter.Field{Column: "currency", Type: filter.String, Operators: text()}
	return dataset{
		info: Dataset{Name: "services", Description: "The services ordered, one row per service, by the time each was created.", TimeField: "created_at"},
		from: "services x", alias: "x", timeCol: "created_at",
		cols: func(dialect) []string {
			return append(cols("x", "id", "organization_id", "account_id", "name", "kind", "service_type", "status", "sla", "city", "state", "zip",
				"location_id", "bandwidth_mbps", "monthly_charge", "one_time_charge", "currency", "created_at", "updated_at", "status_changed_at", "activated_at"),
				categoryCase("x.kind")+" AS category")
		},
		metrics: []metricDef{
			count("count", "", "services"),
			count("active", "status IN ('operational', 'degraded', 'maintenance')", "services operational, degraded or in maintenance"),
			count("activated", "activated_at IS NOT NULL", "services activated at least once"),
			metric("sum_monthly_charge", TypeMoney, aggSum, "monthly_charge", false, "sum of the monthly recurring charges"),
			metric("avg_monthly_charge", TypeMoney, aggAvg, "monthly_charge", false, "mean monthly recurring charge"),
			metric("sum_one_time_charge", TypeMoney, aggSum, "one_time_charge", false, "sum of the one-time charges"),
			metric("sum_bandwidth_mbps", TypeInteger, aggSum, "bandwidth_mbps", false, "sum of the bandwidths, Mbps"),
			metric("avg_bandwidth_mbps", TypeNumber, aggAvg, "bandwidth_mbps", false, "mean bandwidth, Mbps"),
			metric("max_bandwidth_mbps", TypeInteger, aggMax, "bandwidth_mbps", false, "greatest bandwidth, Mbps"),
		},
		dims: append([]dimDef{
			dim("type", "kind", "the service kind (internet, network, phone_system, ...)"),
			dim("category", "category", "the catalog category of the kind (connectivity, voice, cloud, security, ai)"),
			dim("service_type", "service_type", "the service type"),
			dim("status", "status", "the service's status"),
			dim("sla", "sla", "the SLA tier"),
			dim("city", "city", "the service location's city"),
			dim("state", "state", "the service location's state"),
			dim("location_id", "location_id", "the serviceable location"),
			dim("account_id", "account_id", "the billing account"),
			dim("currency", "currency", "the currency of the charges"),
			{col: Column{Name: "bandwidth_mbps", Type: TypeInteger, Description: "the bandwidth, Mbps"}, expr: "bandwidth_mbps"},
			orgDim(),
		}, timeDims("created_at")...),
		filter: schema,
	}
}

// telemetryDataset is the telemetry samples with their services' kind.
func telemetryDataset() dataset {
	return dataset{
		info:  Dataset{Name: "telemetry", Description: "The services' telemetry samples, by the time each was taken, with the service's kind, category, SLA tier and account.", TimeField: "at"},
		from:  "telemetry_samples t LEFT JOIN services s ON s.id = t.service_id AND s.organization_id = t.organization_id AND s.environment = t.environment",
		alias: "t", timeCol: "at",
		cols: func(dialect) []string {
			return append(cols("t", "organization_id", "service_id", "at", "up", "latency_ms", "jitter_ms", "packet_loss_pct", "utilization_pct",
				"throughput_mbps", "data_mb", "calls", "call_quality", "security_alerts"),
				"COALESCE(s.kind, '') AS kind", "COALESCE(s.sla, '') AS sla", "COALESCE(s.account_id, '') AS account_id",
				categoryCase("s.kind")+" AS category")
		},
		metrics: []metricDef{
			count("samples", "", "samples"),
			count("up_samples", "up", "samples taken while the service was up"),
			pct("availability_pct", "CASE WHEN up THEN 1 ELSE 0 END", "1", "up samples / samples × 100"),
			metric("avg_latency_ms", TypeNumber, aggAvg, "latency_ms", true, "mean latency, ms"),
			metric("min_latency_ms", TypeNumber, aggMin, "latency_ms", true, "least latency, ms"),
			metric("max_latency_ms", TypeNumber, aggMax, "latency_ms", true, "greatest latency, ms"),
			metric("avg_jitter_ms", TypeNumber, aggAvg, "jitter_ms", true, "mean jitter, ms"),
			metric("avg_packet_loss_pct", TypeNumber, aggAvg, "packet_loss_pct", true, "mean packet loss, %"),
			metric("avg_utilization_pct", TypeNumber, aggAvg, "utilization_pct", true, "mean utilisation, %"),
			metric("max_utilization_pct", TypeNumber, aggMax, "utilization_pct", true, "greatest utilisation, %"),
			metric("avg_throughput_mbps", TypeNumber, aggAvg, "throughput_mbps", true, "mean throughput, Mbps"),
			scaled(metric("sum_data_gb", TypeNumber, aggSum, "data_mb", true, "data transferred, GB (data_mb / 1000)"), 0.001),
			metric("sum_calls", TypeInteger, aggSum, "calls", false, "calls handled"),
			metric("avg_call_quality", TypeNumber, aggAvg, "CASE WHEN calls > 0 THEN call_quality END", true, "mean call quality (MOS, 1 to 5) of the samples with calls"),
			metric("sum_security_alerts", TypeInteger, aggSum, "security_alerts", false, "security alerts raised"),
		},
		dims: append([]dimDef{
			dim("service_id", "service_id", "the service"),
			dim("type", "kind", "the service's kind"),
			dim("category", "category", "the catalog category of the service's kind"),
			dim("sla", "sla", "the service's SLA tier"),
			dim("account_id", "account_id", "the service's billing account"),
			orgDim(),
		}, timeDims("at")...),
		filter: filter.Schema{
			"service_id":      {Column: "service_id", Type: filter.String, Operators: text()},
			"type":            {Column: "kind", Type: filter.Enum, Values: services.KindNames()},
			"category":        {Column: "category", Type: filter.Enum, Values: categories()},
			"sla":             {Column: "sla", Type: filter.String, Operators: text()},
			"account_id":      {Column: "account_id", Type: filter.String, Operators: text()},
			"up":              {Column: "up", Type: filter.Bool},
			"latency_ms":      {Column: "latency_ms", Type: filter.Decimal},
			"jitter_ms":       {Column: "jitter_ms", Type: filter.Decimal},
			"packet_loss_pct": {Column: "packet_loss_pct", Type: filter.Decimal},
			"utilization_pct": {Column: "utilization_pct", Type: filter.Decimal},
			"calls":           {Column: "calls", Type: filter.Int},
			"at":              {Column: "at", Type: filter.Time},
		},
	}
}

// usageDataset is the usage records, by the start of their period.
func usageDataset() dataset {
	return dataset{
		info: Dataset{Name: "usage", Description: "The usage records (metered quantities and their cost), by the start of the period each measures.", TimeField: "period_start"},
		from: "usage_records u", alias: "u", timeCol: "period_start",
		cols: func(dialect) []string {
			return cols("u", "organization_id", "account_id", "service_id", "subscription_id", "service_type", "category", "metric", "quantity", "unit",
				"period_start", "period_end", "cost", "currency", "invoice_id", "created_at")
		},
		metrics: []metricDef{
			count("count", "", "usage records"),
			metric("sum_quantity", TypeNumber, aggSum, "quantity", true, "sum of the quantities (group by metric or unit to keep units apart)"),
			metric("avg_quantity", TypeNumber, aggAvg, "quantity", true, "mean quantity"),
			metric("max_quantity", TypeNumber, aggMax, "quantity", true, "greatest quantity"),
			metric("sum_cost", TypeMoney, aggSum, "cost", false, "sum of the costs"),
			metric("avg_cost", TypeMoney, aggAvg, "cost", false, "mean cost"),
			count("invoiced", "invoice_id <> ''", "records already on an invoice"),
		},
		dims: append([]dimDef{
			dim("metric", "metric", "what was measured"),
			dim("unit", "unit", "the quantity's unit"),
			dim("service_id", "service_id", "the service"),
			dim("account_id", "account_id", "the billing account"),
			dim("service_type", "service_type", "the service type"),
			dim("category", "category", "the category"),
			dim("currency", "currency", "the currency of the cost"),
			orgDim(),
		}, timeDims("period_start")...),
		filter: filter.Schema{
			"metric":       {Column: "metric", Type: filter.String, Operators: text()},
			"unit":         {Column: "unit", Type: filter.String, Operators: text()},
			"service_id":   {Column: "service_id", Type: filter.String, Operators: text()},
			"account_id":   {Column: "account_id", Type: filter.String, Operators: text()},
			"service_type": {Column: "service_type", Type: filter.String, Operators: text()},
			"category":     {Column: "category", Type: filter.String, Operators: text()},
			"currency":     {Column: "currency", Type: filter.String, Operators: text()},
			"invoice_id":   {Column: "NULLIF(invoice_id, '')", Type: filter.String, Nullable: true, Operators: append(text(), filter.IsNull, filter.IsNotNull)},
			"quantity":     {Column: "quantity", Type: filter.Decimal},
			"cost":         {Column: "cost", Type: filter.Money},
			"period_start": {Column: "period_start", Type: filter.Time},
			"period_end":   {Column: "period_end", Type: filter.Time},
		},
	}
}

// invoicesDataset is the invoices, by issue time.
func invoicesDataset() dataset {
	due := "status IN ('pending', 'overdue')"
	return dataset{
		info: Dataset{Name: "invoices", Description: "The invoices, by the time each was issued.", TimeField: "issued_at"},
		from: "invoices i", alias: "i", timeCol: "issued_at",
		cols: func(dialect) []string {
			return cols("i", "organization_id", "account_id", "number", "status", "source", "subscription_id", "currency", "subtotal", "tax",
				"total", "amount_paid", "issued_at", "due_date", "paid_at", "created_at", "updated_at")
		},
		metrics: []metricDef{
			count("count", "", "invoices"),
			count("paid", "status = 'paid'", "invoices paid"),
			count("overdue", "status = 'overdue'", "invoices overdue"),
			metric("sum_subtotal", TypeMoney, aggSum, "subtotal", false, "sum of the subtotals"),
			metric("sum_tax", TypeMoney, aggSum, "tax", false, "sum of the taxes"),
			metric("sum_total", TypeMoney, aggSum, "total", false, "sum of the totals"),
			metric("avg_total", TypeMoney, aggAvg, "total", false, "mean total"),
			metric("max_total", TypeMoney, aggMax, "total", false, "greatest total"),
			metric("sum_amount_paid", TypeMoney, aggSum, "amount_paid", false, "sum of the amounts paid"),
			metric("sum_amount_due", TypeMoney, aggSum, "CASE WHEN "+due+" THEN total - amount_paid ELSE 0 END", false,
				"sum of total - amount paid of the pending and overdue invoices"),
		},
		dims: append([]dimDef{
			dim("status", "status", "the invoice's status"),
			dim("account_id", "account_id", "the billing account"),
			dim("currency", "currency", "the invoice's currency"),
			dim("source", "source", "what raised the invoice"),
			orgDim(),
		}, timeDims("issued_at")...),
		filter: billing.InvoiceFilterSchema(),
	}
}

// paymentsDataset is the payments, by creation time.
func paymentsDataset() dataset {
	return dataset{
		info: Dataset{Name: "payments", Description: "The payments, by the time each was made.", TimeField: "created_at"},
		from: "payments p", alias: "p", timeCol: "created_at",
		cols: func(dialect) []string {
			return cols("p", "organization_id", "invoice_id", "account_id", "amount", "currency", "status", "source", "method_type", "card_brand",
				"created_at", "processed_at")
		},
		metrics: []metricDef{
			count("count", "", "payments"),
			count("successful", "status = 'successful'", "payments that succeeded"),
			count("failed", "status = 'failed'", "payments that failed"),
			pct("success_rate_pct", "CASE WHEN status = 'successful' THEN 1 ELSE 0 END", "CASE WHEN status IN ('successful', 'failed') THEN 1 ELSE 0 END",
				"successful / (successful + failed) × 100"),
			metric("sum_amount", TypeMoney, aggSum, "amount", false, "sum of the amounts"),
			metric("avg_amount", TypeMoney, aggAvg, "amount", false, "mean amount"),
			metric("sum_successful_amount", TypeMoney, aggSum, "CASE WHEN status = 'successful' THEN amount ELSE 0 END", false, "sum of the amounts that succeeded"),
		},
		dims: append([]dimDef{
			dim("status", "status", "the payment's status"),
			dim("method", "method_type", "the payment method's type"),
			dim("card_brand", "card_brand", "the card's brand (empty for other methods)"),
			dim("currency", "currency", "the payment's currency"),
			dim("account_id", "account_id", "the billing account"),
			dim("source", "source", "what made the payment"),
			orgDim(),
		}, timeDims("created_at")...),
		filter: billing.PaymentFilterSchema(),
	}
}

// operationsDataset is the long-running operations, by creation time.
func operationsDataset() dataset {
	statuses := []string{string(operations.OpPending), string(operations.OpInProgress), string(operations.OpCompleted), string(operations.OpPartial),
		string(operations.OpFailed), string(operations.OpRolledBack), string(operations.OpCancelled)}
	return dataset{
		info: Dataset{Name: "operations", Description: "The long-running operations (provisioning, changes, bulk work, reports), by the time each was created.", TimeField: "created_at"},
		from: "operations o", alias: "o", timeCol: "created_at",
		cols: func(d dialect) []string {
			return append(cols("o", "organization_id", "type", "status", "resource_id", "created_at", "updated_at", "finished_at"),
				"CASE WHEN o.finished_at IS NOT NULL THEN "+d.seconds("o.created_at", "o.finished_at")+" END AS duration_s")
		},
		metrics: []metricDef{
			count("count", "", "operations"),
			count("completed", "status = 'completed'", "operations completed"),
			count("failed", "status IN ('failed', 'rolled_back')", "operations failed or rolled back"),
			count("finished", "finished_at IS NOT NULL", "operations finished"),
			metric("avg_duration_seconds", TypeNumber, aggAvg, "duration_s", true, "mean finished_at - created_at of the finished operations, seconds"),
			metric("min_duration_seconds", TypeNumber, aggMin, "duration_s", true, "least duration of the finished operations, seconds"),
			metric("max_duration_seconds", TypeNumber, aggMax, "duration_s", true, "greatest duration of the finished operations, seconds"),
		},
		dims: append([]dimDef{
			dim("type", "type", "the operation's type"),
			dim("status", "status", "the operation's status"),
			orgDim(),
		}, timeDims("created_at")...),
		filter: filter.Schema{
			"type":        {Column: "type", Type: filter.String, Operators: text()},
			"status":      {Column: "status", Type: filter.Enum, Values: statuses},
			"resource_id": {Column: "resource_id", Type: filter.String, Operators: text()},
			"created_at":  {Column: "created_at", Type: filter.Time},
			"finished_at": {Column: "finished_at", Type: filter.Time, Nullable: true},
		},
	}
}

// ticketsDataset is the support tickets, by creation time.
func ticketsDataset() dataset {
	resolved := "k.status IN ('resolved', 'closed') AND k.resolved_at IS NOT NULL"
	return dataset{
		info: Dataset{Name: "tickets", Description: "The support tickets, by the time each was opened.", TimeField: "created_at"},
		from: "support_tickets k", alias: "k", timeCol: "created_at",
		cols: func(d dialect) []string {
			return append(cols("k", "organization_id", "status", "priority", "category", "subcategory", "customer_id", "assigned_to", "title",
				"escalation_level", "created_at", "updated_at", "resolved_at"),
				"CASE WHEN "+resolved+" THEN 1 ELSE 0 END AS resolved",
				"CASE WHEN k.escalation_level > 0 OR k.escalated_at IS NOT NULL THEN 1 ELSE 0 END AS escalated",
				"CASE WHEN "+resolved+" THEN "+d.seconds("k.created_at", "k.resolved_at")+" END AS resolution_s",
				"CASE WHEN k.responded_at IS NOT NULL THEN "+d.seconds("k.created_at", "k.responded_at")+" END AS response_s")
		},
		metrics: []metricDef{
			count("count", "", "tickets"),
			count("open", "status NOT IN ('resolved', 'closed')", "tickets not resolved or closed"),
			count("resolved", "resolved = 1", "tickets resolved or closed (with a resolution time)"),
			count("escalated", "escalated = 1", "tickets escalated at least once"),
			pct("escalation_rate_pct", "escalated", "1", "escalated / tickets × 100"),
			scaled(metric("avg_resolution_hours", TypeNumber, aggAvg, "resolution_s", true, "mean resolved_at - created_at of the resolved tickets, hours"), 1.0/3600),
			scaled(metric("max_resolution_hours", TypeNumber, aggMax, "resolution_s", true, "greatest resolution time, hours"), 1.0/3600),
			scaled(metric("avg_first_response_hours", TypeNumber, aggAvg, "response_s", true, "mean time to the first response of the answered tickets, hours"), 1.0/3600),
		},
		dims: append([]dimDef{
			dim("status", "status", "the ticket's status"),
			dim("priority", "priority", "the ticket's priority"),
			dim("category", "category", "the ticket's category"),
			dim("subcategory", "subcategory", "the ticket's subcategory (empty without one)"),
			dim("agent", "CASE WHEN assigned_to = '' THEN 'unassigned' ELSE assigned_to END", "the assigned agent, or unassigned"),
			dim("customer_id", "customer_id", "the customer who opened the ticket"),
			orgDim(),
		}, timeDims("created_at")...),
		filter: support.TicketFilterSchema(),
	}
}

// slaDataset is the SLA clocks of the tickets (one per metric and cycle),
// by the time each started.
func slaDataset() dataset {
	measured := "(breached_at IS NOT NULL OR state = 'stopped')"
	return dataset{
		info: Dataset{Name: "sla", Description: "The SLA clocks of the support tickets: one per metric (response, resolution) and cycle of a ticket, by the time each started, with the ticket's priority, category and customer.",
			TimeField: "started_at"},
		from:  "support_sla_clocks c LEFT JOIN support_tickets k ON k.id = c.ticket_id AND k.organization_id = c.organization_id AND k.environment = c.environment",
		alias: "c", timeCol: "started_at",
		cols: func(dialect) []string {
			return append(cols("c", "organization_id", "ticket_id", "cycle", "metric", "state", "target_minutes", "business_hours", "elapsed_seconds",
				"started_at", "due_at", "breached_at", "stopped_at"),
				"COALESCE(k.priority, '') AS priority", "COALESCE(k.category, '') AS category", "COALESCE(k.customer_id, '') AS customer_id")
		},
		metrics: []metricDef{
			count("count", "", "clocks"),
			count("breached", "breached_at IS NOT NULL", "clocks breached"),
			count("met", "breached_at IS NULL AND state = 'stopped'", "clocks stopped without a breach"),
			count("measured", measured, "clocks decided: breached or stopped"),
			pct("attainment_pct", "CASE WHEN breached_at IS NULL AND state = 'stopped' THEN 1 ELSE 0 END", "CASE WHEN "+measured+" THEN 1 ELSE 0 END", "met / measured × 100"),
			metric("avg_target_minutes", TypeNumber, aggAvg, "target_minutes", false, "mean target, minutes"),
			scaled(metric("avg_elapsed_minutes", TypeNumber, aggAvg, "CASE WHEN state = 'stopped' THEN elapsed_seconds END", false, "mean time counted by the stopped clocks, minutes"), 1.0/60),
		},
		dims: append([]dimDef{
			dim("metric", "metric", "the SLA metric: response or resolution"),
			dim("state", "state", "the clock's state: running, paused or stopped"),
			dim("priority", "priority", "the ticket's priority"),
			dim("category", "category", "the ticket's category"),
			dim("customer_id", "customer_id", "the ticket's customer"),
			orgDim(),
		}, timeDims("started_at")...),
		filter: filter.Schema{
			"metric":         {Column: "metric", Type: filter.Enum, Values: support.Metrics()},
			"state":          {Column: "state", Type: filter.Enum, Values: []string{support.ClockRunning, support.ClockPaused, support.ClockStopped}},
			"priority":       {Column: "priority", Type: filter.Enum, Values: support.Priorities(), Ordered: true},
			"category":       {Column: "category", Type: filter.String, Operators: text()},
			"customer_id":    {Column: "customer_id", Type: filter.String, Operators: text()},
			"ticket_id":      {Column: "ticket_id", Type: filter.String, Operators: text()},
			"cycle":          {Column: "cycle", Type: filter.Int},
			"target_minutes": {Column: "target_minutes", Type: filter.Int},
			"business_hours": {Column: "business_hours", Type: filter.Bool},
			"started_at":     {Column: "started_at", Type: filter.Time},
			"due_at":         {Column: "due_at", Type: filter.Time, Nullable: true},
			"breached_at":    {Column: "breached_at", Type: filter.Time, Nullable: true},
			"stopped_at":     {Column: "stopped_at", Type: filter.Time, Nullable: true},
		},
	}
}
