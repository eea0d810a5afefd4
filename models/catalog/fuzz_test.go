package catalog_test

import (
	"errors"
	"testing"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/catalog"
)

// FuzzParseBandwidth: ParseBandwidth never panics; it answers 1 to
// 400,000 Mbit/s whose FormatBandwidth text parses back to the same
// value, or a VALIDATION_ERROR on the field it was given.
func FuzzParseBandwidth(f *testing.F) {
	for _, s := range []string{"500mbps", "1gbps", "400gbps", "401gbps", "0mbps", "1Gbps", "10 gbps", "999999gbps", "1.5gbps", "", "gbps", "01gbps"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := catalog.ParseBandwidth("bandwidth", s)
		if err != nil {
			var e *models.Error
			if !errors.As(err, &e) || e.Code != models.CodeValidation {
				t.Fatalf("%q: error %v is not a VALIDATION_ERROR", s, err)
			}
			issues, _ := e.Details["fields"].([]models.FieldIssue)
			if len(issues) != 1 || issues[0].Field != "bandwidth" {
				t.Fatalf("%q: issues %v", s, issues)
			}
			return
		}
		if n < 1 || n > 400_000 {
			t.Fatalf("%q: %d Mbit/s out of range", s, n)
		}
		text := catalog.FormatBandwidth(n)
		back, err := catalog.ParseBandwidth("bandwidth", text)
		if err != nil || back != n {
			t.Fatalf("%q: %d Mbit/s formats as %q, which parses to %d (%v)", s, n, text, back, err)
		}
	})
}
