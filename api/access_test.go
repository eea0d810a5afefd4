package api_test

import (
	"flag"
	"os"
	"strings"
	"testing"
)

var updateDocs = flag.Bool("update-docs", false, "rewrite the generated tables of the docs")

const (
	accessTableStart = "<!-- access-rules:start (generated from the routes; `go test ./api -run TestSecurityModelTable -update-docs`) -->"
	accessTableEnd   = "<!-- access-rules:end -->"
)

// TestSecurityModelTable keeps the security model's table in
// docs/authentication.md equal to what the routes declare: every /v1
// operation, the permission it needs and whether it challenges users with a
// second factor.
func TestSecurityModelTable(t *testing.T) {
	h := newHarness(t)
	var b strings.Builder
	b.WriteString("| Operation | Needs | Second factor |\n|---|---|---|\n")
	for _, r := range h.srv.AccessRules() {
		needs := r.Permission
		if needs != "public" && needs != "any credential" {
			needs = "`" + strings.ReplaceAll(needs, ", ", "` + `") + "`"
		}
		mfa := ""
		if r.MFA {
			mfa = "challenged"
		}
		b.WriteString("| `" + r.Operation + "` | " + needs + " | " + mfa + " |\n")
	}
	const path = "../docs/authentication.md"
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	i, j := strings.Index(doc, accessTableStart), strings.Index(doc, accessTableEnd)
	if i < 0 || j < i {
		t.Fatalf("%s has no generated access table (markers %q ... %q)", path, accessTableStart, accessTableEnd)
	}
	got := doc[i+len(accessTableStart)+1 : j]
	if got == b.String() {
		return
	}
	if *updateDocs {
		if err := os.WriteFile(path, []byte(doc[:i+len(accessTableStart)+1]+b.String()+doc[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatalf("the access table of %s differs from the routes; run go test ./api -run TestSecurityModelTable -update-docs. Want:\n%s", path, b.String())
}
