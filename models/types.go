package models

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Money is an amount in minor units (cents). It is a JSON number with two
// decimals outside and an integer inside: never float arithmetic on money.
type Money int64

// MarshalJSON writes the amount as a number with two decimals.
func (m Money) MarshalJSON() ([]byte, error) {
	return []byte(m.String()), nil
}

// UnmarshalJSON reads a JSON number with at most two decimals.
func (m *Money) UnmarshalJSON(b []byte) error {
	v, err := ParseMoney(string(b))
	if err != nil {
		return err
	}
	*m = v
	return nil
}

// String returns the amount with two decimals, e.g. "12.50".
func (m Money) String() string {
	sign := ""
	v := int64(m)
	if v < 0 {
		sign = "-"
		v = -v
	}
	return fmt.Sprintf("%s%d.%02d", sign, v/100, v%100)
}

// ParseMoney parses a decimal amount with at most two decimals into minor units.
func ParseMoney(s string) (Money, error) {
	s = strings.TrimSpace(s)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	whole, frac, _ := strings.Cut(s, ".")
	if whole == "" || len(frac) > 2 || strings.ContainsAny(whole+frac, "eE+-") {
		return 0, fmt.Errorf("amount must have at most two decimals")
	}
	for len(frac) < 2 {
		frac += "0"
	}
	w, err := strconv.ParseInt(whole, 10, 64)
	if err != nil || w > math.MaxInt64/100-1 {
		return 0, fmt.Errorf("invalid amount")
	}
	f, err := strconv.ParseInt(frac, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("invalid amount")
	}
	v := w*100 + f
	if neg {
		v = -v
	}
	return Money(v), nil
}

// Float returns the amount in major units for display-only arithmetic.
func (m Money) Float() float64 { return float64(m) / 100 }

// Timestamp formats t as RFC 3339 UTC with Z (DECISIONS 2).
func Timestamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }
