package webhooks

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/telcoplatform/platform/models"
)

// resolverFunc adapts a function to Resolver.
type resolverFunc func(ctx context.Context, network, host string) ([]netip.Addr, error)

func (f resolverFunc) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	return f(ctx, network, host)
}

// staticResolver answers from a table; unknown names are NXDOMAIN.
func staticResolver(table map[string][]string) Resolver {
	return resolverFunc(func(_ context.Context, _, host string) ([]netip.Addr, error) {
		if host == "temporary.example" {
			return nil, &net.DNSError{Err: "server misbehaving", Name: host, Server: "10.0.0.2:53", IsTemporary: true}
		}
		ips, ok := table[host]
		if !ok {
			return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
		}
		out := make([]netip.Addr, len(ips))
		for i, s := range ips {
			out[i] = netip.MustParseAddr(s)
		}
		return out, nil
	})
}

// failResolver fails the test when asked anything.
func failResolver(t *testing.T) Resolver {
	return resolverFunc(func(_ context.Context, _, host string) ([]netip.Addr, error) {
		t.Errorf("unexpected lookup of %q", host)
		return nil, errors.New("unexpected lookup")
	})
}

func TestValidateURL(t *testing.T) {
	r := staticResolver(map[string][]string{
		"hooks.example.com": {"93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"},
		"localhost":         {"127.0.0.1", "::1"},
		"metadata.internal": {"169.254.169.254"},
		"mixed.example":     {"93.184.216.34", "10.0.0.7"},
		"ula.example":       {"fd00::1"},
		"mapped.example":    {"::ffff:10.0.0.1"},
		"cgnat.example":     {"100.64.0.1"},
		"empty.example":     {},
	})
	const refusedAddr = "host resolves to a loopback, private, link-local or otherwise non-public address"
	tests := []struct {
		name         string
		url          string
		allowPrivate bool
		code         models.Code // "" = accepted
		issue        string      // substring of the message
	}{
		{"public name", "https://hooks.example.com/webhooks/telco?x=1", false, "", ""},
		{"public IPv4 literal", "http://93.184.216.34:8443/hook", false, "", ""},
		{"public IPv6 literal", "https://[2606:4700::1111]/hook", false, "", ""},
		{"loopback v4", "http://127.0.0.1/hook", false, models.CodeValidation, refusedAddr},
		{"loopback v4 other", "http://127.1.2.3:9000/hook", false, models.CodeValidation, refusedAddr},
		{"private 10/8", "http://10.1.2.3/hook", false, models.CodeValidation, refusedAddr},
		{"private 172.16/12", "http://172.20.0.1/hook", false, models.CodeValidation, refusedAddr},
		{"private 192.168/16", "http://192.168.1.1/hook", false, models.CodeValidation, refusedAddr},
		{"cloud metadata", "http://169.254.169.254/latest/meta-data/", false, models.CodeValidation, refusedAddr},
		{"loopback v6", "http://[::1]/hook", false, models.CodeValidation, refusedAddr},
		{"link-local v6", "http://[fe80::1]/hook", false, models.CodeValidation, refusedAddr},
		{"link-local v6 with zone", "http://[fe80::1%25eth0]/hook", false, models.CodeValidation, refusedAddr},
		{"unique local v6", "http://[fc00::1]/hook", false, models.CodeValidation, refusedAddr},
		{"IPv4-mapped loopback", "http://[::ffff:127.0.0.1]/hook", false, models.CodeValidation, refusedAddr},
		{"IPv4-mapped metadata", "http://[::ffff:a9fe:a9fe]/hook", false, models.CodeValidation, refusedAddr},
		{"CGNAT", "http://100.64.0.1/hook", false, models.CodeValidation, refusedAddr},
		{"unspecified v4", "http://0.0.0.0/hook", false, models.CodeValidation, refusedAddr},
		{"unspecified v6", "http://[::]/hook", false, models.CodeValidation, refusedAddr},
		{"multicast", "http://224.0.0.1/hook", false, models.CodeValidation, refusedAddr},
		{"name resolving to loopback", "http://localhost:8080/hook", false, models.CodeValidation, refusedAddr},
		{"name resolving to metadata", "http://metadata.internal/", false, models.CodeValidation, refusedAddr},
		{"name with one private address", "https://mixed.example/", false, models.CodeValidation, refusedAddr},
		{"name resolving to ULA", "https://ula.example/", false, models.CodeValidation, refusedAddr},
		{"name resolving to mapped private", "https://mapped.example/", false, models.CodeValidation, refusedAddr},
		{"name resolving to CGNAT", "https://cgnat.example/", false, models.CodeValidation, refusedAddr},
		{"unknown name", "https://nxdomain.example/", false, models.CodeValidation, "host does not resolve"},
		{"empty answer", "https://empty.example/", false, models.CodeValidation, "does not resolve"},
		{"temporary DNS failure", "https://temporary.example/", false, models.CodeDependencyUnavailable, "try again"},
		{"ftp", "ftp://hooks.example.com/x", false, models.CodeValidation, "scheme"},
		{"javascript", "javascript:alert(1)", false, models.CodeValidation, "absolute"},
		{"relative", "/hook", false, models.CodeValidation, "absolute"},
		{"scheme-relative", "//hooks.example.com/hook", false, models.CodeValidation, "absolute"},
		{"no host", "http:///hook", false, models.CodeValidation, "host"},
		{"userinfo", "https://user:pw@hooks.example.com/", false, models.CodeValidation, "user information"},
		{"username only", "https://user@hooks.example.com/", false, models.CodeValidation, "user information"},
		{"port 0", "https://hooks.example.com:0/", false, models.CodeValidation, "port"},
		{"port too big", "https://hooks.example.com:70000/", false, models.CodeValidation, "port"},
		{"space in host", "https://hooks example.com/", false, models.CodeValidation, "absolute"},
		{"too long", "https://hooks.example.com/" + strings.Repeat("a", MaxURLLength), false, models.CodeValidation, "at most 2000"},
		{"exactly 2000", "https://hooks.example.com/" + strings.Repeat("a", MaxURLLength-len("https://hooks.example.com/")), false, "", ""},
		{"allowPrivate: loopback", "http://127.0.0.1:8080/hook", true, "", ""},
		{"allowPrivate: metadata literal", "http://169.254.169.254/", true, "", ""},
		{"allowPrivate: still http(s) only", "file:///etc/passwd", true, models.CodeValidation, "scheme"},
		{"allowPrivate: still no userinfo", "http://a:b@127.0.0.1/", true, models.CodeValidation, "user information"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := r
			if tt.allowPrivate {
				res = failResolver(t) // allowPrivate does not resolve
			}
			err := ValidateURLWith(context.Background(), res, tt.url, tt.allowPrivate)
			if tt.code == "" {
				if err != nil {
					t.Fatalf("ValidateURLWith(%q) = %v, want nil", tt.url, err)
				}
				return
			}
			e := wantCode(t, err, tt.code)
			if !strings.Contains(e.Message, tt.issue) {
				t.Fatalf("message %q does not contain %q", e.Message, tt.issue)
			}
			if tt.code == models.CodeValidation && !slices.Equal(fieldsOf(t, err), []string{"url"}) {
				t.Fatalf("fields = %v, want [url]", fieldsOf(t, err))
			}
			for _, leak := range []string{"169.254", "10.0.0", "127.0.0.1", "fd00"} {
				if strings.Contains(e.Message, leak) && !strings.Contains(tt.url, leak) {
					t.Fatalf("message %q reveals a resolved address", e.Message)
				}
			}
		})
	}
}

// TestValidateURLDefaultResolver uses IP literals only, so nothing is
// looked up.
func TestValidateURLDefaultResolver(t *testing.T) {
	ctx := context.Background()
	if err := ValidateURL(ctx, "https://93.184.216.34/hook", false); err != nil {
		t.Fatalf("public literal: %v", err)
	}
	if err := ValidateURL(ctx, "http://127.0.0.1/hook", false); err == nil {
		t.Fatal("loopback literal accepted")
	}
	if err := ValidateURL(ctx, "http://127.0.0.1/hook", true); err != nil {
		t.Fatalf("loopback literal with allowPrivate: %v", err)
	}
}

func TestIsPublic(t *testing.T) {
	tests := []struct {
		addr   string
		public bool
	}{
		{"93.184.216.34", true},
		{"8.8.8.8", true},
		{"1.1.1.1", true},
		{"100.63.255.255", true},
		{"100.128.0.0", true},
		{"172.15.255.255", true},
		{"172.32.0.0", true},
		{"2606:4700::1111", true},
		{"2a00:1450:4001:80b::200e", true},
		{"::ffff:8.8.8.8", true},
		{"64:ff9b::808:808", true},
		{"2002:808:808::1", true},
		{"0.0.0.0", false},
		{"0.1.2.3", false},
		{"10.0.0.1", false},
		{"100.64.0.1", false},
		{"100.127.255.255", false},
		{"127.0.0.1", false},
		{"127.255.255.254", false},
		{"169.254.169.254", false},
		{"172.16.0.1", false},
		{"172.31.255.255", false},
		{"192.0.0.170", false},
		{"192.0.2.1", false},
		{"192.168.0.1", false},
		{"198.18.0.1", false},
		{"198.51.100.1", false},
		{"203.0.113.1", false},
		{"224.0.0.251", false},
		{"239.255.255.250", false},
		{"240.0.0.1", false},
		{"255.255.255.255", false},
		{"::", false},
		{"::1", false},
		{"::127.0.0.1", false},
		{"::ffff:127.0.0.1", false},
		{"::ffff:10.0.0.1", false},
		{"::ffff:169.254.169.254", false},
		{"::ffff:100.64.0.1", false},
		{"fe80::1", false},
		{"fe80::1%eth0", false},
		{"febf::1", false},
		{"fec0::1", false},
		{"fc00::1", false},
		{"fd12:3456::1", false},
		{"ff02::1", false},
		{"ff05::2", false},
		{"64:ff9b::7f00:1", false},
		{"64:ff9b::a9fe:a9fe", false},
		{"64:ff9b:1::1", false},
		{"2002:7f00:1::1", false},
		{"2002:a00:1::1", false},
		{"2001::1", false},
		{"2001:db8::1", false},
		{"100::1", false},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			if got := IsPublic(netip.MustParseAddr(tt.addr)); got != tt.public {
				t.Fatalf("IsPublic(%s) = %v, want %v", tt.addr, got, tt.public)
			}
		})
	}
	if IsPublic(netip.Addr{}) {
		t.Fatal("the zero Addr is public")
	}
}

func TestControlDial(t *testing.T) {
	tests := []struct {
		address string
		ok      bool
	}{
		{"93.184.216.34:443", true},
		{"[2606:4700::1111]:443", true},
		{"127.0.0.1:80", false},
		{"[::1]:80", false},
		{"[::ffff:127.0.0.1]:80", false},
		{"169.254.169.254:80", false},
		{"10.0.0.1:8080", false},
		{"not-an-address", false},
	}
	for _, tt := range tests {
		t.Run(tt.address, func(t *testing.T) {
			err := controlDial("tcp", tt.address, nil)
			if (err == nil) != tt.ok {
				t.Fatalf("controlDial(%s) = %v, want ok=%v", tt.address, err, tt.ok)
			}
		})
	}
}

// TestRebindingRefusedAtConnect simulates DNS rebinding: the name is public
// when the URL is checked and loopback when it is dialled. The connection
// is refused by the dialer's Control hook and the receiver sees nothing.
func TestRebindingRefusedAtConnect(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
	}))
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())

	var lookups atomic.Int32
	r := resolverFunc(func(_ context.Context, _, host string) ([]netip.Addr, error) {
		if host != "rebind.example" {
			return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
		}
		if lookups.Add(1) == 1 {
			return []netip.Addr{netip.MustParseAddr("93.184.216.34")}, nil // at validation
		}
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil // at connection time
	})
	c := NewClient(false, WithResolver(r))
	t.Cleanup(c.CloseIdleConnections)

	url := "http://rebind.example:" + port + "/hook"
	a := c.Deliver(context.Background(), url, []string{NewSecret()}, "msg_rebind", time.Now(), []byte(`{}`))
	if a.Success || a.StatusCode != 0 {
		t.Fatalf("attempt = %+v, want a failure without a response", a)
	}
	if !strings.Contains(a.Error, "destination refused") {
		t.Fatalf("Error = %q, want the connection-time refusal", a.Error)
	}
	if strings.Contains(a.Error, "127.0.0.1") {
		t.Fatalf("Error %q reveals the internal address", a.Error)
	}
	if n := lookups.Load(); n < 2 {
		t.Fatalf("%d lookups, want validation and dial", n)
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("receiver got %d requests", n)
	}
}
