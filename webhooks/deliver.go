package webhooks

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/telcoplatform/platform/models"
)

// DefaultTimeout bounds one delivery attempt: URL check, DNS, connect, TLS,
// sending the body and reading the response prefix.
const DefaultTimeout = 10 * time.Second

// UserAgent is the User-Agent of every delivery.
const UserAgent = "telco-platform-webhooks/1"

// ResponseBodyPrefixLimit is how many bytes of the receiver's response body
// an Attempt keeps.
const ResponseBodyPrefixLimit = 1024

// drainLimit is how much more of a response body is read (and discarded) so
// the connection can be reused.
const drainLimit = 64 << 10

// Attempt is the outcome of one delivery attempt, as logged by the
// delivery workflow.
type Attempt struct {
	// StatusCode is the receiver's HTTP status, 0 when no response arrived.
	StatusCode int
	// Latency is the time from the start of the attempt to its end.
	Latency time.Duration
	// Error says why the attempt failed ("" on success). It never contains
	// secrets nor addresses that the SSRF guard refused.
	Error string
	// ResponseBodyPrefix is at most the first 1 KiB of the response body,
	// made valid UTF-8 without NUL bytes so it can be stored as text.
	ResponseBodyPrefix string
	// Success is true for a 2xx response.
	Success bool
}

// Client sends webhook deliveries. It refuses non-public destinations
// (unless built with allowPrivate) both before the request and again on the
// address actually dialled, does not follow redirects, ignores proxy
// environment variables and bounds every attempt by its timeout. It is safe
// for concurrent use.
type Client struct {
	allowPrivate bool
	resolver     Resolver
	timeout      time.Duration
	hc           *http.Client
	// wrap wraps the transport (tracing); nil: none.
	wrap func(http.RoundTripper) http.RoundTripper
}

// Option configures a Client.
type Option func(*Client)

// WithResolver makes the Client resolve host names with r, both when
// checking a URL and when dialling (default net.DefaultResolver). Tests use
// it to simulate DNS answers, including ones that change between the two.
func WithResolver(r Resolver) Option {
	return func(c *Client) {
		if r != nil {
			c.resolver = r
		}
	}
}

// WithTimeout sets the bound of one attempt (default DefaultTimeout);
// d <= 0 keeps the default.
func WithTimeout(d time.Duration) Option {
	return func(c *Client) {
		if d > 0 {
			c.timeout = d
		}
	}
}

// WithTransportWrapper wraps the Client's transport with wrap (the
// tracing instrumentation, tracing.Provider.WrapTransport): requests go
// through the wrapper, then through the Client's own transport, whose
// dialer keeps refusing non-public addresses. nil keeps the transport.
func WithTransportWrapper(wrap func(http.RoundTripper) http.RoundTripper) Option {
	return func(c *Client) { c.wrap = wrap }
}

// NewClient returns a Client. allowPrivate (config WEBHOOK_ALLOW_PRIVATE)
// lets it deliver to loopback, private and link-local addresses, which
// development and tests need.
func NewClient(allowPrivate bool, opts ...Option) *Client {
	c := &Client{allowPrivate: allowPrivate, resolver: net.DefaultResolver, timeout: DefaultTimeout}
	for _, o := range opts {
		o(c)
	}
	dialer := &net.Dialer{KeepAlive: 30 * time.Second}
	if !allowPrivate {
		dialer.Control = controlDial
	}
	tr := &http.Transport{
		Proxy: nil, // never a proxy from the environment
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return c.dial(ctx, dialer, network, addr)
		},
		TLSClientConfig:        &tls.Config{MinVersion: tls.VersionTLS12},
		ForceAttemptHTTP2:      true,
		TLSHandshakeTimeout:    c.timeout,
		ResponseHeaderTimeout:  c.timeout,
		MaxIdleConns:           100,
		MaxIdleConnsPerHost:    4,
		IdleConnTimeout:        90 * time.Second,
		MaxResponseHeaderBytes: 64 << 10,
	}
	var rt http.RoundTripper = tr
	if c.wrap != nil {
		rt = c.wrap(tr)
	}
	c.hc = &http.Client{
		Transport: rt,
		Timeout:   c.timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
	return c
}

// dial resolves addr's host with the Client's resolver and connects to each
// address in turn; the dialer's Control hook refuses non-public addresses at
// connection time.
func (c *Client) dial(ctx context.Context, d *net.Dialer, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	var ips []netip.Addr
	if ip, err := netip.ParseAddr(host); err == nil {
		ips = []netip.Addr{ip}
	} else {
		lookupNet := "ip"
		switch network {
		case "tcp4":
			lookupNet = "ip4"
		case "tcp6":
			lookupNet = "ip6"
		}
		if ips, err = c.resolver.LookupNetIP(ctx, lookupNet, host); err != nil {
			return nil, err
		}
		if len(ips) == 0 {
			return nil, &net.DNSError{Err: "no addresses", Name: host, IsNotFound: true}
		}
	}
	var errs []error
	for _, ip := range ips {
		conn, err := d.DialContext(ctx, network, net.JoinHostPort(ip.String(), port))
		if err == nil {
			return conn, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, errors.Join(errs...)
}

// ValidateURL checks rawURL with the Client's resolver and allowPrivate
// setting; see ValidateURLWith for the rules and error codes.
func (c *Client) ValidateURL(ctx context.Context, rawURL string) error {
	return ValidateURLWith(ctx, c.resolver, rawURL, c.allowPrivate)
}

// CloseIdleConnections closes the Client's idle keep-alive connections.
func (c *Client) CloseIdleConnections() { c.hc.CloseIdleConnections() }

// Deliver makes one delivery attempt: it checks rawURL (ValidateURL), signs
// body with secrets for msgID at ts (Sign), and POSTs it with Content-Type
// application/json, User-Agent UserAgent and the webhook-id,
// webhook-timestamp and webhook-signature headers. Redirects are not
// followed. msgID (the webhook-id) identifies the message and stays the
// same across the retries of a delivery so receivers can deduplicate; ts is
// the time of this attempt (each attempt is signed afresh).
//
// It returns the outcome and never panics: a refused URL, a signing error,
// a network error, a timeout (the Client's timeout or ctx) and a non-2xx
// status (3xx included) are failures with Success false and Error set;
// StatusCode is 0 when no response arrived.
func (c *Client) Deliver(ctx context.Context, rawURL string, secrets []string, msgID string, ts time.Time, body []byte) Attempt {
	return c.attempt(ctx, rawURL, body, func() (map[string]string, string) {
		sig, err := Sign(secrets, msgID, ts, body)
		if err != nil {
			return nil, "signing failed: " + models.AsError(err).Message
		}
		return map[string]string{HeaderID: msgID, HeaderTimestamp: strconv.FormatInt(ts.Unix(), 10), HeaderSignature: sig}, ""
	})
}

// Post makes one unsigned delivery attempt, as chat applications' incoming
// webhooks take them: it checks rawURL (ValidateURL) and POSTs body with
// Content-Type application/json, User-Agent UserAgent and the webhook-id
// header msgID (the same across retries, so receivers can deduplicate).
// Redirects are not followed. The outcome is as Deliver's.
func (c *Client) Post(ctx context.Context, rawURL, msgID string, body []byte) Attempt {
	return c.attempt(ctx, rawURL, body, func() (map[string]string, string) {
		return map[string]string{HeaderID: msgID}, ""
	})
}

// attempt is one delivery attempt of body to rawURL within the Client's
// timeout: the URL checked (ValidateURL), then POSTed with the headers
// headers returns (or the failure it reports); a panic becomes a failed
// attempt, and Latency is the whole attempt's.
func (c *Client) attempt(ctx context.Context, rawURL string, body []byte, headers func() (map[string]string, string)) (a Attempt) {
	start := time.Now()
	defer func() {
		if r := recover(); r != nil {
			a = Attempt{Error: fmt.Sprintf("internal error: %v", r)}
		}
		a.Latency = time.Since(start)
	}()
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	if err := c.ValidateURL(ctx, rawURL); err != nil {
		a.Error = "url refused: " + models.AsError(err).Message
		return a
	}
	h, failure := headers()
	if failure != "" {
		a.Error = failure
		return a
	}
	return c.send(ctx, rawURL, h, body)
}

// send POSTs body to rawURL with headers and returns the outcome (Latency
// is set by the caller).
func (c *Client) send(ctx context.Context, rawURL string, headers map[string]string, body []byte) (a Attempt) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, rawURL, bytes.NewReader(body))
	if err != nil {
		a.Error = "building the request failed: " + unwrapURLError(err).Error()
		return a
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", UserAgent)
	for k, v := range headers {
		req.Header.Set(k, v)
	}

	resp, err := c.hc.Do(req)
	if err != nil {
		a.Error = c.describe(err)
		return a
	}
	defer func() { _ = resp.Body.Close() }()
	a.StatusCode = resp.StatusCode
	prefix, _ := io.ReadAll(io.LimitReader(resp.Body, ResponseBodyPrefixLimit))
	a.ResponseBodyPrefix = textPrefix(prefix)
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, drainLimit))
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode <= 299:
		a.Success = true
	case resp.StatusCode >= 300 && resp.StatusCode <= 399:
		a.Error = fmt.Sprintf("redirect not followed: HTTP %d; update the webhook URL", resp.StatusCode)
	default:
		a.Error = fmt.Sprintf("non-2xx response: HTTP %d", resp.StatusCode)
	}
	return a
}

// describe turns a transport error into a short message without internal
// addresses.
func (c *Client) describe(err error) string {
	var notAllowed *errAddrNotAllowed
	var dnsErr *net.DNSError
	var netErr net.Error
	var certErr *tls.CertificateVerificationError
	switch {
	case errors.As(err, &notAllowed):
		return "destination refused: the host resolves to a loopback, private, link-local or otherwise non-public address"
	case errors.As(err, &dnsErr):
		return fmt.Sprintf("DNS lookup of %s failed: %s", dnsErr.Name, dnsErr.Err)
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return fmt.Sprintf("timeout: no complete response within %s", c.timeout)
	case errors.Is(err, context.Canceled):
		return "canceled before a response arrived"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset by the receiver"
	case errors.As(err, &certErr):
		return "TLS certificate not trusted: " + certErr.Err.Error()
	}
	return unwrapURLError(err).Error()
}

// unwrapURLError drops the *url.Error wrapper (which repeats the method and
// URL) from err.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// textPrefix makes b storable as text: a rune cut at the end is dropped,
// invalid UTF-8 becomes U+FFFD and NUL bytes are removed.
func textPrefix(b []byte) string {
	if len(b) == ResponseBodyPrefixLimit {
		// Drop a trailing rune that the limit cut in the middle.
		i := len(b) - 1
		for i > 0 && len(b)-i < utf8.UTFMax && !utf8.RuneStart(b[i]) {
			i--
		}
		if !utf8.FullRune(b[i:]) {
			b = b[:i]
		}
	}
	return strings.ReplaceAll(strings.ToValidUTF8(string(b), "\uFFFD"), "\x00", "")
}

// Payload returns the JSON body of a delivery:
// {"id":…,"event":…,"timestamp":…,"data":…}, with event canonicalised
// (aliases replaced), timestamp in RFC 3339 UTC seconds ("2026-01-02T03:04:05Z")
// and data as given (nil becomes {}).
//
// Errors: VALIDATION_ERROR (*models.Error) on field "id" (empty), "event"
// (unknown name) or "timestamp" (zero); INTERNAL_ERROR when data cannot be
// encoded as JSON.
func Payload(id, event string, ts time.Time, data any) ([]byte, error) {
	var v models.Validator
	v.Check(id != "", "id", "is required")
	canonical, ok := Canonical(event)
	v.Check(ok, "event", fmt.Sprintf("unknown event %q", event))
	v.Check(!ts.IsZero(), "timestamp", "is required")
	if err := v.Err(); err != nil {
		return nil, err
	}
	if data == nil {
		data = json.RawMessage("{}")
	}
	b, err := json.Marshal(struct {
		ID        string `json:"id"`
		Event     string `json:"event"`
		Timestamp string `json:"timestamp"`
		Data      any    `json:"data"`
	}{id, canonical, models.Timestamp(ts), data})
	if err != nil {
		return nil, models.Internal(fmt.Errorf("webhooks: encoding the data of %s: %w", canonical, err))
	}
	return b, nil
}
