// Package businesstime is the platform's business-time arithmetic: a
// calendar of weekly working hours in an IANA time zone, with holidays,
// and pure, deterministic functions over it (add business time to an
// instant, count the business time between two instants, split a span into
// working and non-working pieces). It does no I/O: the SLA workflows call it
// directly, and the API's what-if simulation uses the same functions.
package businesstime

import (
	_ "time/tzdata" // zones are embedded: the same answers on every machine
)

// Interval is one working period of a day, in minutes after local
// midnight: [Start, End), 0 <= Start < End <= 1440.
type Interval struct {
	Start int `json:"start"`
	End   int `json:"end"`
}

// Holiday is a local calendar date (YYYY-MM-DD) on which nobody works.
type Holiday struct {
	Date string `json:"date"`
	Name string `json:"name,omitempty"`
}

// Calendar is when business time runs: the working intervals of each
// weekday (indexed by time.Weekday, sorted, not overlapping) in Zone, an
// IANA time zone name, except on Holidays. A nil *Calendar means calendar
// time: every minute counts.
type Calendar struct {
	Zone     string        `json:"zone"`
	Week     [7][]Interval `json:"week"`
	Holidays []Holiday     `json:"holidays,omitempty"`
}
