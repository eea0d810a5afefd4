package models

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
)

// supportedCurrencies are the ISO 4217 codes billing accounts may hold, in
// the order errors list them.
var supportedCurrencies = []string{"USD", "EUR", "GBP", "CAD", "AUD"}

// SupportedCurrency reports whether code (upper case) is a currency the
// platform bills in.
func SupportedCurrency(code string) bool { return slices.Contains(supportedCurrencies, code) }

// CurrencyIssue is the validation issue of a currency the platform does
// not bill in.
const CurrencyIssue = "must be a supported ISO 4217 code (USD, EUR, GBP, CAD, AUD)"

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
		// A type error, which encoding/json completes with the path of the
		// field it was meant for (ParseMoney of the value gives the reason).
		return &json.UnmarshalTypeError{Value: "number " + string(b), Type: reflect.TypeFor[Money]()}
	}
	*m = v
	return nil
}

// String returns the amount with two decimals, e.g. "12.50".
func (m Money) String() string {
	sign := ""
	v := uint64(m) // two's complement: the magnitude of math.MinInt64 fits
	if m < 0 {
		sign = "-"
		v = -v
	}
	return fmt.Sprintf("%s%d.%02d", sign, v/100, v%100)
}

// ParseMoney parses a decimal amount with at most two decimals (zeros
// after them are allowed: 1.050) into minor units; every amount a Money
// holds (math.MinInt64 to math.MaxInt64 cents) parses, a larger one is
// refused.
func ParseMoney(s string) (Money, error) {
	s = strings.TrimSpace(s)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	whole, frac, _ := strings.Cut(s, ".")
	if len(frac) > 2 {
		// Zeros past the cents change nothing: 1.050 is 1.05.
		frac = frac[:2] + strings.TrimRight(frac[2:], "0")
	}
	if strings.ContainsAny(whole+frac, "eE") {
		return 0, fmt.Errorf("an amount is written as a plain decimal number with at most two decimals (12.50), without an exponent")
	}
	if whole == "" || len(frac) > 2 || strings.ContainsAny(whole+frac, "+-") {
		return 0, fmt.Errorf("an amount must have at most two decimals")
	}
	for len(frac) < 2 {
		frac += "0"
	}
	w, err := strconv.ParseUint(whole, 10, 64)
	if errors.Is(err, strconv.ErrRange) {
		return 0, fmt.Errorf("an amount must be at most 92233720368547758.07 in magnitude")
	}
	if err != nil {
		return 0, fmt.Errorf("invalid amount")
	}
	f, err := strconv.ParseUint(frac, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("invalid amount")
	}
	limit := uint64(math.MaxInt64)
	if neg {
		limit++ // math.MinInt64
	}
	if w > (limit-f)/100 {
		return 0, fmt.Errorf("an amount must be at most 92233720368547758.07 in magnitude")
	}
	v := w*100 + f
	if neg {
		return Money(-v), nil // wraps to math.MinInt64 at the limit
	}
	return Money(v), nil
}

// Float returns the amount in major units for display-only arithmetic.
func (m Money) Float() float64 { return float64(m) / 100 }

// Timestamp formats t as RFC 3339 UTC with Z (DECISIONS 2).
func Timestamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }
