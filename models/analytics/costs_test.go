package analytics_test

import (
	"context"
	"math"
	"testing"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/analytics"
)

// TestCostForecastRoundsTheFraction: at a fixed clock, the forecast's
// elapsed_fraction is the elapsed share of the month rounded (half away
// from zero, not truncated) to four decimals, and the forecast is
// spent_to_date / elapsed_fraction as published, rounded to the minor
// unit (docs/analytics.md, Forecast).
func TestCostForecastRoundsTheFraction(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	in := analytics.QueryInput{Period: analytics.PeriodCurrentMonth}
	// January 2030 has 2,678,400 seconds; the fixture's net spend is 117.00
	// by the 12th.
	tests := []struct {
		name     string
		now      string
		fraction float64
		spent    models.Money
		forecast models.Money
	}{
		{"the first hours count as one day (0.03225...)", "2030-01-01T06:00:00Z", 0.0323, 0, 0},
		{"exactly half a ten-thousandth rounds up (0.03375)", "2030-01-02T01:06:36Z", 0.0338, 0, 0},
		{"15 of 31 days (0.48387...)", "2030-01-16T00:00:00Z", 0.4839, 11700, 24179},
		{"22 of 31 days (0.70967...)", "2030-01-23T00:00:00Z", 0.7097, 11700, 16486},
		{"30 of 31 days (0.96774...)", "2030-01-31T00:00:00Z", 0.9677, 11700, 12091},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			now := at(tc.now)
			c, err := f.s.Costs(ctx, f.a, parse(t, in, false, now), "", now)
			if err != nil {
				t.Fatal(err)
			}
			fc := c.Forecast
			if fc.ElapsedFraction != tc.fraction || fc.SpentToDate != tc.spent || fc.Forecast != tc.forecast {
				t.Fatalf("forecast %+v, want elapsed_fraction %v, spent_to_date %d, forecast %d", fc, tc.fraction, tc.spent, tc.forecast)
			}
			// The documented formula holds with the published figures.
			if want := models.Money(math.Round(float64(fc.SpentToDate) / fc.ElapsedFraction)); fc.Forecast != want {
				t.Errorf("forecast %d, but spent_to_date / elapsed_fraction = %d", fc.Forecast, want)
			}
		})
	}
}
