package api

import (
	"slices"
	"strings"

	"github.com/danielgtaylor/huma/v2"
)

// AccessRule is what one operation requires of its caller, as declared on
// its route: the security model's table (docs/authentication.md).
type AccessRule struct {
	Operation  string // "METHOD /v1/path"
	Permission string // "public", "any credential", "admin" or a permission
	MFA        bool   // users with a second factor are challenged
}

// AccessRules returns the access rule of every /v1 operation, sorted by
// path then method (documentation and tests).
func (s *Server) AccessRules() []AccessRule {
	var out []AccessRule
	for path, item := range s.API.OpenAPI().Paths {
		if !strings.HasPrefix(path, "/v1/") {
			continue
		}
		for _, op := range []*huma.Operation{item.Get, item.Post, item.Put, item.Patch, item.Delete} {
			if op == nil {
				continue
			}
			a, ok := op.Metadata[accessKey].(access)
			if !ok {
				continue
			}
			out = append(out, AccessRule{Operation: op.Method + " " + path, Permission: a.describe(), MFA: needsMFA(a)})
		}
	}
	slices.SortFunc(out, func(x, y AccessRule) int {
		xm, xp, _ := strings.Cut(x.Operation, " ")
		ym, yp, _ := strings.Cut(y.Operation, " ")
		if c := strings.Compare(xp, yp); c != 0 {
			return c
		}
		return strings.Compare(xm, ym)
	})
	return out
}

// describe names what the rule requires, in the words of the security model.
func (a access) describe() string {
	switch {
	case a.public:
		return "public"
	case a.admin && a.permission != "":
		return "admin, " + a.permission
	case a.admin:
		return "admin"
	case a.staff && a.permission != "":
		return "staff, " + a.permission
	case a.permission != "":
		return a.permission
	}
	return "any credential"
}
