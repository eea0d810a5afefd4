package api

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/ory/fosite"

	"github.com/telcoplatform/platform/auth"
	"github.com/telcoplatform/platform/models/identity"
)

// oauthRepeatable are the parameters a request may send more than once:
// resource indicators (RFC 8707) and audiences.
var oauthRepeatable = map[string]bool{"resource": true, "audience": true}

// repeatedParams reads the request's parameters (query and form body) and
// returns, sorted, the names sent more than once. RFC 6749 sections 3.1
// and 3.2: request parameters MUST NOT be included more than once. A body
// or query that cannot be parsed is an error (invalid_request): parsing
// fills r.Form even when it fails, so the endpoint's own reading would not
// see the failure.
func repeatedParams(r *http.Request) ([]string, error) {
	if err := r.ParseMultipartForm(1 << 20); err != nil && !errors.Is(err, http.ErrNotMultipart) {
		return nil, err
	}
	if r.MultipartForm != nil {
		defer func() { _ = r.MultipartForm.RemoveAll() }()
	}
	var names []string
	for name, values := range r.Form {
		if len(values) > 1 && !oauthRepeatable[name] {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names, nil
}

func repeatedHint(names []string) string {
	return "parameter " + strings.Join(names, ", ") + " must not be included more than once"
}

// refuseRepeated answers a request to /oauth/token, /oauth/introspect,
// /oauth/revoke or /oauth/device/code that sends a parameter more than
// once (400 invalid_request naming it), and reports whether it did.
func refuseRepeated(w http.ResponseWriter, r *http.Request) bool {
	names, err := repeatedParams(r)
	if err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request", "the request's parameters cannot be read: send them form-encoded (application/x-www-form-urlencoded)")
		return true
	}
	if len(names) == 0 {
		return false
	}
	oauthError(w, http.StatusBadRequest, "invalid_request", repeatedHint(names))
	return true
}

// refuseRepeatedAuthorize answers an authorization request (the page or
// its form) that sends a parameter more than once, and reports whether it
// did. RFC 6749 section 4.1.2.1: when client_id or redirect_uri is the one
// repeated, the error is shown to the user and never redirected; otherwise
// it goes to the client's redirect URI when that is valid, like every
// other error of the request.
func (h *oauthHandlers) refuseRepeatedAuthorize(ctx context.Context, w http.ResponseWriter, r *http.Request, p fosite.OAuth2Provider) bool {
	names, perr := repeatedParams(r)
	if perr != nil {
		p.WriteAuthorizeError(ctx, w, fosite.NewAuthorizeRequest(), fosite.ErrInvalidRequest.WithHint("The request's parameters cannot be read."))
		return true
	}
	if len(names) == 0 {
		return false
	}
	err := fosite.ErrInvalidRequest.WithHint(repeatedHint(names) + ".")
	if slices.Contains(names, "client_id") || slices.Contains(names, "redirect_uri") {
		p.WriteAuthorizeError(ctx, w, fosite.NewAuthorizeRequest(), err)
		return true
	}
	ar, _ := p.NewAuthorizeRequest(ctx, r) // only to learn whether the redirect URI can be trusted
	p.WriteAuthorizeError(ctx, w, ar, err)
	return true
}

// narrowRefreshScopes applies the scope parameter of a refresh (RFC 6749
// section 6, identity.RefreshScopes): a scope the grant does not hold is
// invalid_scope; fewer scopes than the grant's narrow the new access token,
// while the new refresh token keeps the grant's (auth.Session.GrantScope).
// Other grants are left alone.
func narrowRefreshScopes(ar fosite.AccessRequester) error {
	if !ar.GetGrantTypes().ExactOne(identity.GrantRefreshToken) {
		return nil
	}
	req, ok := ar.(*fosite.AccessRequest)
	if !ok {
		return fosite.ErrServerError.WithDebug("unexpected access request type")
	}
	scopes, outside := identity.RefreshScopes(req.GetGrantedScopes(), strings.Fields(req.GetRequestForm().Get("scope")))
	if outside != "" {
		return fosite.ErrInvalidScope.WithHintf("The scope %q was not granted originally: a refresh may ask for the grant's scopes or fewer.", outside)
	}
	if sess, ok := req.GetSession().(*auth.Session); ok {
		sess.GrantScope = slices.Clone([]string(req.GetGrantedScopes()))
	}
	req.GrantedScope = fosite.Arguments(scopes)
	return nil
}
