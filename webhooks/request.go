package webhooks

import (
	"context"
	"net/http"

	"github.com/telcoplatform/platform/models"
)

// Do sends req through the Client's guarded transport, for integrations
// that call a peer's API rather than deliver an event (the support tracker
// integration): the URL is checked first (ValidateURL), the address
// actually dialled is checked again, redirects are not followed and the
// whole exchange is bounded by the Client's timeout, which ctx may shorten.
// The caller closes the response body. Errors: the URL refusal
// (VALIDATION_ERROR, DEPENDENCY_UNAVAILABLE) or a transport error; Describe
// turns the latter into a message without internal addresses.
func (c *Client) Do(ctx context.Context, req *http.Request) (*http.Response, error) {
	if err := c.ValidateURL(ctx, req.URL.String()); err != nil {
		return nil, err
	}
	if req.Header.Get("User-Agent") == "" {
		req.Header.Set("User-Agent", UserAgent)
	}
	return c.hc.Do(req.WithContext(ctx))
}

// Describe says why a request failed in a short message without internal
// addresses (as the Error of an Attempt).
func (c *Client) Describe(err error) string {
	if e, ok := err.(*models.Error); ok {
		return "url refused: " + e.Message
	}
	return c.describe(err)
}
