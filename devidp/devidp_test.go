package devidp

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// TestManagementNeedsTheToken: the sign-in endpoints answer anyone; the
// management endpoints (users, service providers, sessions, shortcuts)
// answer only with the IdP's token, which AddUser sends.
func TestManagementNeedsTheToken(t *testing.T) {
	idp, err := Start("127.0.0.1:0", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = idp.Close() })
	do := func(method, path, token, body string) int {
		t.Helper()
		req, err := http.NewRequest(method, idp.URL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	if st := do("GET", "/metadata", "", ""); st != http.StatusOK {
		t.Fatalf("metadata: %d", st)
	}
	user := `{"name":"mallory","email":"mallory@demo.example","password":"known"}`
	for _, tc := range []struct{ method, path, body string }{
		{"PUT", "/users/mallory", user}, {"GET", "/users/", ""}, {"GET", "/sessions/", ""},
		{"GET", "/services/", ""}, {"PUT", "/shortcuts/x", `{}`}, {"DELETE", "/users/demo", ""},
	} {
		for _, token := range []string{"", "wrong"} {
			if st := do(tc.method, tc.path, token, tc.body); st != http.StatusNotFound {
				t.Errorf("%s %s with token %q: %d, want 404", tc.method, tc.path, token, st)
			}
		}
	}
	if err := idp.AddUser(context.Background(), User{Name: "ada", Email: "ada@demo.example", Password: "pw"}); err != nil {
		t.Fatal(err)
	}
	if st := do("GET", "/users/ada", idp.token, ""); st != http.StatusOK {
		t.Fatalf("the user added with the token: %d", st)
	}
	if st := do("GET", "/users/mallory", idp.token, ""); st == http.StatusOK {
		t.Fatal("the user put without the token exists")
	}
}
