package analytics

import "math"

// TrendMethod names how trends forecast a series (see docs/analytics.md):
// an ordinary least-squares line through the bucket values, by bucket
// index, with a 95 % prediction interval from Student's t.
const TrendMethod = "ols_linear"

// IntervalConfidence is the confidence of the forecast's prediction
// interval, in percent.
const IntervalConfidence = 95

// MinFitPoints is the fewest whole, ended buckets a forecast is fitted on:
// a line through two points has no residuals to size its interval from.
const MinFitPoints = 3

// LinearFit is an ordinary least-squares line y = Intercept + Slope × x
// through the points (i, ys[i]), i = 0 … N−1.
type LinearFit struct {
	N         int     // points fitted
	Slope     float64 // change per bucket
	Intercept float64 // the line at x = 0 (the first bucket fitted)
	StdError  float64 // residual standard error s = sqrt(SSE / (N − 2))
	MeanX     float64 // x̄ = (N − 1) / 2
	Sxx       float64 // Σ (x − x̄)²
	T         float64 // the 97.5 % quantile of Student's t with N − 2 degrees of freedom
}

// FitLinear fits the least-squares line through (i, ys[i]). ok is false
// with fewer than MinFitPoints values.
func FitLinear(ys []float64) (fit LinearFit, ok bool) {
	n := len(ys)
	if n < MinFitPoints {
		return LinearFit{N: n}, false
	}
	fit.N = n
	fit.MeanX = float64(n-1) / 2
	var meanY float64
	for _, y := range ys {
		meanY += y
	}
	meanY /= float64(n)
	var sxy float64
	for i, y := range ys {
		dx := float64(i) - fit.MeanX
		fit.Sxx += dx * dx
		sxy += dx * (y - meanY)
	}
	fit.Slope = sxy / fit.Sxx
	fit.Intercept = meanY - fit.Slope*fit.MeanX
	var sse float64
	for i, y := range ys {
		r := y - fit.At(float64(i))
		sse += r * r
	}
	fit.StdError = math.Sqrt(sse / float64(n-2))
	fit.T = TQuantile975(n - 2)
	return fit, true
}

// At returns the line's value at x.
func (f LinearFit) At(x float64) float64 { return f.Intercept + f.Slope*x }

// Interval returns the point forecast at x and the half-width of its 95 %
// prediction interval: t × s × sqrt(1 + 1/N + (x − x̄)² / Sxx).
func (f LinearFit) Interval(x float64) (value, halfWidth float64) {
	dx := x - f.MeanX
	return f.At(x), f.T * f.StdError * math.Sqrt(1+1/float64(f.N)+dx*dx/f.Sxx)
}

// TQuantile975 returns the 97.5 % quantile of Student's t with df degrees
// of freedom (df ≥ 1): from a table up to 30, beyond it the Cornish–Fisher
// expansion around the normal quantile 1.959964 (within 0.0001 there).
func TQuantile975(df int) float64 {
	if df < 1 {
		return math.NaN()
	}
	// The 97.5 % quantiles for 1 to 30 degrees of freedom.
	table := [...]float64{12.7062, 4.3027, 3.1824, 2.7764, 2.5706, 2.4469, 2.3646, 2.3060, 2.2622, 2.2281,
		2.2010, 2.1788, 2.1604, 2.1448, 2.1314, 2.1199, 2.1098, 2.1009, 2.0930, 2.0860,
		2.0796, 2.0739, 2.0687, 2.0639, 2.0595, 2.0555, 2.0518, 2.0484, 2.0452, 2.0423}
	if df <= len(table) {
		return table[df-1]
	}
	const z = 1.959963985
	n := float64(df)
	z3, z5 := z*z*z, z*z*z*z*z
	return z + (z3+z)/(4*n) + (5*z5+16*z3+3*z)/(96*n*n)
}

// GrowthRate returns (current − previous) / previous × 100, two decimals;
// nil when previous is 0 (growth from nothing has no rate).
func GrowthRate(current, previous float64) *float64 {
	if previous == 0 {
		return nil
	}
	return ptr(round2((current - previous) / math.Abs(previous) * 100))
}
