package ratelimit

import "testing"

func TestCost(t *testing.T) {
	tests := []struct {
		method string
		want   int
	}{
		{"GET", 1}, {"get", 1}, {"HEAD", 1}, {"OPTIONS", 1},
		{"POST", 2}, {"PUT", 2}, {"PATCH", 2},
		{"DELETE", 3},
	}
	for _, tt := range tests {
		if got := Cost(tt.method); got != tt.want {
			t.Errorf("Cost(%q) = %d, want %d", tt.method, got, tt.want)
		}
		if got := Cost(tt.method); got > MaxCost {
			t.Errorf("Cost(%q) = %d above MaxCost", tt.method, got)
		}
	}
}

func TestGroupHourlyLimit(t *testing.T) {
	tests := []struct {
		g    Group
		want int
	}{
		{GroupBilling, 100},
		{GroupProvisioning, 50},
		{GroupExports, 10},
		{GroupAccount, 200},
		{GroupNone, 0},
		{Group("unknown"), 0},
	}
	for _, tt := range tests {
		if got := tt.g.HourlyLimit(); got != tt.want {
			t.Errorf("%q.HourlyLimit() = %d, want %d", tt.g, got, tt.want)
		}
	}
}
