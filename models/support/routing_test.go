package support_test

import (
	"testing"
	"time"

	"github.com/telcoplatform/platform/models/support"
)

func TestRoutingRuleMatches(t *testing.T) {
	tk := &support.Ticket{Title: "Total OUTAGE in NYC", Description: "All links down.", Category: "network", Priority: "high"}
	tests := []struct {
		name string
		rule support.RoutingRule
		tier string
		want bool
	}{
		{"no conditions", support.RoutingRule{}, "business", true},
		{"category", support.RoutingRule{Category: "network"}, "business", true},
		{"other category", support.RoutingRule{Category: "voice"}, "business", false},
		{"priority listed", support.RoutingRule{Priorities: []string{"critical", "high"}}, "business", true},
		{"priority not listed", support.RoutingRule{Priorities: []string{"critical"}}, "business", false},
		{"keyword any case", support.RoutingRule{Keywords: []string{"outage"}}, "business", true},
		{"keyword in description", support.RoutingRule{Keywords: []string{"nothing", "LINKS"}}, "business", true},
		{"no keyword", support.RoutingRule{Keywords: []string{"latency"}}, "business", false},
		{"tier", support.RoutingRule{CustomerTier: "enterprise"}, "enterprise", true},
		{"other tier", support.RoutingRule{CustomerTier: "enterprise"}, "business", false},
		{"all hold", support.RoutingRule{Category: "network", Priorities: []string{"high"}, Keywords: []string{"nyc"}, CustomerTier: "business"}, "business", true},
		{"one fails", support.RoutingRule{Category: "network", Priorities: []string{"high"}, Keywords: []string{"nyc"}, CustomerTier: "developer"}, "business", false},
	}
	for _, tc := range tests {
		if got := tc.rule.Matches(tk, tc.tier); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestSortRules(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	rules := []support.RoutingRule{
		{ID: "a", CreatedAt: t0},
		{ID: "b", CreatedAt: t0.Add(time.Hour), Priorities: []string{"high"}},
		{ID: "d", CreatedAt: t0.Add(-time.Hour)},
		{ID: "c", CreatedAt: t0.Add(time.Minute), Priorities: []string{"low"}},
		{ID: "e", CreatedAt: t0},
	}
	support.SortRules(rules)
	var got string
	for _, r := range rules {
		got += r.ID
	}
	if got != "cbdae" {
		t.Fatalf("order %s, want cbdae", got)
	}
}
