package webhooks

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"syscall"

	"github.com/telcoplatform/platform/models"
)

// MaxURLLength is the longest subscriber URL accepted, in bytes.
const MaxURLLength = 2000

// Resolver looks up the addresses of a host name. *net.Resolver (and so
// net.DefaultResolver) implements it; tests inject their own.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// ValidateURL checks a subscriber URL with net.DefaultResolver; see
// ValidateURLWith.
func ValidateURL(ctx context.Context, rawURL string, allowPrivate bool) error {
	return ValidateURLWith(ctx, net.DefaultResolver, rawURL, allowPrivate)
}

// ValidateURLWith checks a subscriber URL: an absolute http or https URL of
// at most MaxURLLength bytes, with a host, a port in 1..65535 when one is
// given, and no user information. Unless allowPrivate is true, the host (an
// IP literal, or a name resolved with r) must resolve only to public
// addresses (see IsPublic); with allowPrivate the host is not resolved.
//
// It returns nil when the URL is acceptable, VALIDATION_ERROR
// (*models.Error, field "url") when it is not or when the name does not
// exist, and DEPENDENCY_UNAVAILABLE when the lookup failed for another
// reason (timeout, server failure, ctx done); the resolved addresses are
// only in the error's internal cause, never in its message.
func ValidateURLWith(ctx context.Context, r Resolver, rawURL string, allowPrivate bool) error {
	invalid := func(issue string) error {
		return models.Invalid(models.FieldIssue{Field: "url", Issue: issue})
	}
	if len(rawURL) > MaxURLLength {
		return invalid(fmt.Sprintf("must be at most %d characters", MaxURLLength))
	}
	u, err := url.Parse(rawURL)
	if err != nil || u.Opaque != "" || !u.IsAbs() {
		return invalid("must be an absolute http or https URL")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return invalid("scheme must be http or https")
	}
	if u.User != nil {
		return invalid("must not contain user information")
	}
	host := u.Hostname()
	if host == "" {
		return invalid("must include a host")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return invalid("port must be between 1 and 65535")
		}
	}
	if allowPrivate {
		return nil
	}
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else {
		addrs, err = r.LookupNetIP(ctx, "ip", host)
		var dnsErr *net.DNSError
		switch {
		case err == nil && len(addrs) == 0:
			return invalid("host does not resolve to any address")
		case err == nil:
		case errors.As(err, &dnsErr) && dnsErr.IsNotFound:
			e := models.Invalid(models.FieldIssue{Field: "url", Issue: "host does not resolve"})
			e.Cause = err
			return e
		default:
			return &models.Error{Code: models.CodeDependencyUnavailable,
				Message: "the webhook host could not be resolved; try again later", Cause: err}
		}
	}
	for _, a := range addrs {
		if !IsPublic(a) {
			e := models.Invalid(models.FieldIssue{Field: "url",
				Issue: "host resolves to a loopback, private, link-local or otherwise non-public address"})
			e.Cause = fmt.Errorf("%s resolves to %s", host, a)
			return e
		}
	}
	return nil
}

// IsPublic reports whether a webhook may be sent to address a. It returns
// false for unspecified, loopback, private (RFC 1918, fc00::/7), link-local
// (169.254.0.0/16 with cloud metadata 169.254.169.254, fe80::/10),
// multicast, CGNAT (100.64.0.0/10), "this network" 0.0.0.0/8, IETF protocol
// assignments 192.0.0.0/24, benchmarking 198.18.0.0/15, documentation,
// reserved 240.0.0.0/4 and broadcast, deprecated site-local fec0::/10 and
// IPv4-compatible ::/96, Teredo, discard-only 100::/64; and for IPv6 forms
// that embed an IPv4 address (IPv4-mapped ::ffff:0:0/96, NAT64
// 64:ff9b::/96, 6to4 2002::/16) when the embedded address is not public.
func IsPublic(a netip.Addr) bool {
	a = a.WithZone("")
	if !a.IsValid() {
		return false
	}
	if a.Is4In6() {
		a = a.Unmap()
	}
	if a.Is4() {
		return publicV4(a.As4())
	}
	if a.IsLoopback() || a.IsUnspecified() || a.IsMulticast() || a.IsLinkLocalUnicast() || a.IsPrivate() {
		return false
	}
	b := a.As16()
	switch {
	case b[0] == 0xfe && b[1]&0xc0 == 0xc0: // fec0::/10 site-local (deprecated)
		return false
	case [12]byte(b[:12]) == [12]byte{}: // ::/96 IPv4-compatible (deprecated)
		return false
	case b[0] == 0x00 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b: // 64:ff9b::/32 NAT64
		if b[4]|b[5]|b[6]|b[7]|b[8]|b[9]|b[10]|b[11] == 0 { // 64:ff9b::/96 well-known prefix
			return publicV4([4]byte{b[12], b[13], b[14], b[15]})
		}
		return false // 64:ff9b:1::/48 local-use and the rest of the /32
	case b[0] == 0x20 && b[1] == 0x02: // 2002::/16 6to4
		return publicV4([4]byte{b[2], b[3], b[4], b[5]})
	case b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x00 && b[3] == 0x00: // 2001::/32 Teredo
		return false
	case b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x0d && b[3] == 0xb8: // 2001:db8::/32 documentation
		return false
	case b[0] == 0x01 && b[1]|b[2]|b[3]|b[4]|b[5]|b[6]|b[7] == 0: // 100::/64 discard-only
		return false
	}
	return true
}

// publicV4 reports whether an IPv4 address is public.
func publicV4(b [4]byte) bool {
	switch {
	case b[0] == 0, // 0.0.0.0/8 "this network", unspecified
		b[0] == 10,                               // 10.0.0.0/8 private
		b[0] == 100 && b[1]&0xc0 == 64,           // 100.64.0.0/10 CGNAT
		b[0] == 127,                              // 127.0.0.0/8 loopback
		b[0] == 169 && b[1] == 254,               // 169.254.0.0/16 link-local, cloud metadata
		b[0] == 172 && b[1]&0xf0 == 16,           // 172.16.0.0/12 private
		b[0] == 192 && b[1] == 0 && b[2] == 0,    // 192.0.0.0/24 IETF protocol assignments
		b[0] == 192 && b[1] == 0 && b[2] == 2,    // 192.0.2.0/24 documentation
		b[0] == 192 && b[1] == 168,               // 192.168.0.0/16 private
		b[0] == 198 && b[1]&0xfe == 18,           // 198.18.0.0/15 benchmarking
		b[0] == 198 && b[1] == 51 && b[2] == 100, // 198.51.100.0/24 documentation
		b[0] == 203 && b[1] == 0 && b[2] == 113,  // 203.0.113.0/24 documentation
		b[0] >= 224:                              // multicast, reserved 240.0.0.0/4, broadcast
		return false
	}
	return true
}

// errAddrNotAllowed is the cause of a dial refused by the connection-time
// check.
type errAddrNotAllowed struct{ addr string }

func (e *errAddrNotAllowed) Error() string {
	return "webhooks: refusing to connect to non-public address " + e.addr
}

// controlDial is the net.Dialer.Control hook: it runs after the address is
// resolved and before the socket connects, on the very address being
// dialled, so a DNS answer that changed since validation (rebinding) is
// caught here.
func controlDial(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil || !IsPublic(ap.Addr()) {
		return &errAddrNotAllowed{addr: address}
	}
	return nil
}
