package models_test

import (
	"strings"
	"testing"

	"github.com/telcoplatform/platform/models/catalog"
)

// TestParseBandwidthSaysWhatIsWrong: a well-formed bandwidth out of range is
// refused for its range, not for its form.
func TestParseBandwidthSaysWhatIsWrong(t *testing.T) {
	tests := []struct {
		in        string
		mbps      int
		wantIssue string
	}{
		{"500mbps", 500, ""},
		{"400gbps", 400_000, ""},
		{"1000gbps", 0, "out of the supported range"},
		{"1 Gbps", 0, "must be a number followed by mbps or gbps"},
	}
	for _, tc := range tests {
		n, err := catalog.ParseBandwidth("bandwidth", tc.in)
		if tc.wantIssue == "" {
			if err != nil || n != tc.mbps {
				t.Errorf("%s: %d, %v", tc.in, n, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.wantIssue) {
			t.Errorf("%s: %v, want an issue with %q", tc.in, err, tc.wantIssue)
		}
	}
}
