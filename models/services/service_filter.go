package services

import "github.com/telcoplatform/platform/models/filter"

// ServiceFilterSchema is the fields the service list's filter= expression
// may name (docs/filtering.md): bandwidth_mbps is a number of Mbps,
// monthly_charge an amount of money, name and city take ~ (contains), and
// a service not yet activated has a null activated_at.
func ServiceFilterSchema() filter.Schema {
	text := []filter.Op{filter.Eq, filter.Ne, filter.In, filter.NotIn}
	statuses := make([]string, 0, len(serviceTransitions()))
	for _, st := range []ServiceStatus{ServicePending, ServiceProvisioning, ServiceOperational, ServiceDegraded, ServiceDown,
		ServiceMaintenance, ServiceDecommissioning, ServiceDecommissioned, ServiceFailed} {
		statuses = append(statuses, string(st))
	}
	return filter.Schema{
		"status":            {Column: "status", Type: filter.Enum, Values: statuses},
		"type":              {Column: "kind", Type: filter.Enum, Values: KindNames()},
		"service_type":      {Column: "service_type", Type: filter.String, Operators: text},
		"name":              {Column: "name", Type: filter.String},
		"account_id":        {Column: "account_id", Type: filter.String, Operators: text},
		"location_id":       {Column: "location_id", Type: filter.String, Operators: text},
		"city":              {Column: "city", Type: filter.String},
		"state":             {Column: "state", Type: filter.String, Operators: text},
		"zip":               {Column: "zip", Type: filter.String, Operators: text},
		"bandwidth_mbps":    {Column: "bandwidth_mbps", Type: filter.Int},
		"sla":               {Column: "sla", Type: filter.String, Operators: text},
		"monthly_charge":    {Column: "monthly_charge", Type: filter.Money},
		"created_at":        {Column: "created_at", Type: filter.Time},
		"updated_at":        {Column: "updated_at", Type: filter.Time},
		"status_changed_at": {Column: "status_changed_at", Type: filter.Time},
		"activated_at":      {Column: "activated_at", Type: filter.Time, Nullable: true},
	}
}
