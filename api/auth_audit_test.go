package api_test

import (
	"net/http"
	"testing"
)

type auditList struct {
	AuditEvents []struct {
		ID                   string `json:"id"`
		Timestamp            string `json:"timestamp"`
		EventType            string `json:"event_type"`
		Outcome              string `json:"outcome"`
		UserID               string `json:"user_id"`
		ClientID             string `json:"client_id"`
		IPAddress            string `json:"ip_address"`
		UserAgent            string `json:"user_agent"`
		AuthenticationMethod string `json:"authentication_method"`
		Scopes               string `json:"scopes"`
		Reason               string `json:"reason"`
	} `json:"audit_events"`
	Pagination struct {
		Total int `json:"total"`
	} `json:"pagination"`
}

func TestAuditEvents(t *testing.T) {
	h := newHarness(t)
	h.do("GET", "/v1/users/me", "sk_live_"+"0000000000000000000000000000000000000000000000000000000A", nil, "User-Agent", "audit-test/1.0").wantError(http.StatusUnauthorized, "INVALID_API_KEY")
	h.do("GET", "/v1/users/me", "not.a.jwt", nil).wantError(http.StatusUnauthorized, "INVALID_TOKEN")

	var list auditList
	h.do("GET", "/v1/auth/audit-events?event_type=credential.refused", h.adminKey, nil).decode(http.StatusOK, &list)
	if len(list.AuditEvents) != 2 || list.Pagination.Total != 2 {
		t.Fatalf("refused credentials: %+v", list)
	}
	newest, oldest := list.AuditEvents[0], list.AuditEvents[1]
	if oldest.Outcome != "failure" || oldest.AuthenticationMethod != "api_key" || oldest.Reason != "INVALID_API_KEY" || oldest.UserAgent != "audit-test/1.0" || oldest.IPAddress == "" || oldest.Timestamp == "" {
		t.Fatalf("audit event: %+v", oldest)
	}
	if newest.AuthenticationMethod != "access_token" || newest.Reason != "INVALID_TOKEN" {
		t.Fatalf("audit event: %+v", newest)
	}
	// Administrators only.
	h.do("GET", "/v1/auth/audit-events", h.tenants[0].liveKey, nil).wantError(http.StatusForbidden, "INSUFFICIENT_PERMISSIONS")
	h.do("GET", "/v1/auth/audit-events?limit=0", h.adminKey, nil).wantError(http.StatusBadRequest, "VALIDATION_ERROR")
}
