package ratelimit

import (
	"net/http"
	"strings"
)

// MaxCost is the largest cost of one request. Every bucket holds at least
// this many units, so any request can pass a bucket that is full.
const MaxCost = 3

// Cost returns the number of units a request with the given HTTP method
// spends from the hourly and burst buckets: GET 1, POST 2, PUT 2, DELETE 3.
// PATCH costs like PUT; HEAD, OPTIONS and anything else cost 1.
func Cost(method string) int {
	switch strings.ToUpper(method) {
	case http.MethodPost, http.MethodPut, http.MethodPatch:
		return 2
	case http.MethodDelete:
		return 3
	}
	return 1
}

// Group is an endpoint group with an hourly limit of its own, counted in
// requests (one per request, whatever its cost). The empty Group is no group.
type Group string

// Endpoint groups.
const (
	// GroupNone is no endpoint group.
	GroupNone Group = ""
	// GroupBilling is billing operations (/billing/*): 100 requests per hour.
	GroupBilling Group = "billing"
	// GroupProvisioning is the calls that start service provisioning:
	// 50 requests per hour.
	GroupProvisioning Group = "provisioning"
	// GroupExports is large data exports (usage, cost-analysis, analytics,
	// report and event-list reads): 10 requests per hour.
	GroupExports Group = "exports"
	// GroupAccount is account management (/auth/*, /organizations, /users):
	// 200 requests per hour.
	GroupAccount Group = "account"
)

// HourlyLimit returns the group's limit in requests per hour, or 0 for no
// group or an unknown group (no group limit applies).
func (g Group) HourlyLimit() int {
	switch g {
	case GroupBilling:
		return 100
	case GroupProvisioning:
		return 50
	case GroupExports:
		return 10
	case GroupAccount:
		return 200
	}
	return 0
}
