package models

// Plan is an organization's rate-limit plan (the first plan table of the
// specification, DECISIONS 8).
type Plan string

// Plans.
const (
	PlanDeveloper  Plan = "developer"
	PlanBusiness   Plan = "business"
	PlanEnterprise Plan = "enterprise"
	PlanCustom     Plan = "custom"
)

// PlanLimits are the limits of a plan; zero means unlimited.
type PlanLimits struct {
	HourlyLimit     int
	BurstLimit      int
	Concurrent      int
	MonthlyIncluded int64
	// OverageMicros is the price of one request beyond MonthlyIncluded, in micro-USD.
	OverageMicros int64
}

var planLimits = map[Plan]PlanLimits{
	PlanDeveloper:  {HourlyLimit: 1000, BurstLimit: 100, Concurrent: 10, MonthlyIncluded: 50_000, OverageMicros: 1000},
	PlanBusiness:   {HourlyLimit: 10_000, BurstLimit: 500, Concurrent: 50, MonthlyIncluded: 500_000, OverageMicros: 800},
	PlanEnterprise: {HourlyLimit: 100_000, BurstLimit: 2000, Concurrent: 200, MonthlyIncluded: 5_000_000, OverageMicros: 500},
	PlanCustom:     {},
}

// Valid reports whether p is a known plan.
func (p Plan) Valid() bool { _, ok := planLimits[p]; return ok }

// Limits returns the plan's limits (zero values mean unlimited).
func (p Plan) Limits() PlanLimits { return planLimits[p] }

// OverageCharge returns the overage charge, in micro-USD, of a month in which
// the organization made requests requests (zero within the included volume).
func (l PlanLimits) OverageCharge(requests int64) int64 {
	if l.MonthlyIncluded <= 0 || requests <= l.MonthlyIncluded {
		return 0
	}
	return (requests - l.MonthlyIncluded) * l.OverageMicros
}
