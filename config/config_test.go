package config_test

import (
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/telcoplatform/platform/config"
)

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestLoad(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		wantErr string
	}{
		{"defaults", map[string]string{}, ""},
		{"bad http addr", map[string]string{"HTTP_ADDR": "8080"}, "HTTP_ADDR"},
		{"bad redis url", map[string]string{"REDIS_URL": "http://x"}, "REDIS_URL"},
		{"bad secrets key", map[string]string{"SECRETS_KEY": "short"}, "SECRETS_KEY"},
		{"good secrets key", map[string]string{"SECRETS_KEY": strings.Repeat("ab", 32)}, ""},
		{"bad admin key", map[string]string{"PLATFORM_ADMIN_KEY": "sk_live_short"}, "PLATFORM_ADMIN_KEY"},
		{"bad bool", map[string]string{"WEBHOOK_ALLOW_PRIVATE": "maybe"}, "WEBHOOK_ALLOW_PRIVATE"},
		{"bad duration", map[string]string{"SHUTDOWN_TIMEOUT": "soon"}, "SHUTDOWN_TIMEOUT"},
		{"bad proxies", map[string]string{"TRUSTED_PROXIES": "10.0.0.0/8, nope"}, "TRUSTED_PROXIES"},
		{"mtls needs files", map[string]string{"MTLS_ADDR": ":8443"}, "MTLS_ADDR"},
		{"bad public url", map[string]string{"PUBLIC_BASE_URL": "ftp://x"}, "PUBLIC_BASE_URL"},
		{"temporal compression", map[string]string{"TEMPORAL_COMPRESSION": "none"}, ""},
		{"bad temporal compression", map[string]string{"TEMPORAL_COMPRESSION": "zstd"}, "TEMPORAL_COMPRESSION"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := config.Load(env(tc.env))
			if tc.wantErr == "" && err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("want an error naming %s, got %v", tc.wantErr, err)
			}
		})
	}
}

func TestRequireSecrets(t *testing.T) {
	c, _ := config.Load(env(nil))
	if err := c.RequireSecrets(); err == nil || !strings.Contains(err.Error(), "SECRETS_KEY") {
		t.Fatalf("want SECRETS_KEY error, got %v", err)
	}
}

func TestGeoIPDefaultTable(t *testing.T) {
	c, err := config.Load(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	for ip, want := range map[string]string{
		"192.0.2.7": "US", "198.51.100.200": "DE", "203.0.113.1": "JP", "2001:db8::1": "GB",
		"127.0.0.1": "XL", "::1": "XL", "::ffff:192.0.2.7": "US",
		"8.8.8.8": "", "10.1.2.3": "", "0.0.0.0": "",
	} {
		if got := c.GeoIP.Country(netip.MustParseAddr(ip)); got != want {
			t.Errorf("Country(%s) = %q, want %q", ip, got, want)
		}
	}
	if got := c.GeoIP.Country(netip.Addr{}); got != "" {
		t.Errorf("Country(invalid) = %q", got)
	}
	if c.GeoIP.Len() != 6 {
		t.Errorf("built-in table has %d ranges, want 6", c.GeoIP.Len())
	}
}

func TestGeoIPFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.csv", "cidr,country\n# comment\n\n10.0.0.0/8,fr\n10.1.0.0/16,BE\n10.1.2.3,LU\n::ffff:172.16.0.0/108,NL\n2001:db8:1::/48,ch\n")
	c, err := config.Load(env(map[string]string{"GEOIP_FILE": good}))
	if err != nil {
		t.Fatal(err)
	}
	for ip, want := range map[string]string{
		"10.9.9.9": "FR", "10.1.9.9": "BE", "10.1.2.3": "LU", "172.16.5.5": "NL", "2001:db8:1::5": "CH",
		"192.0.2.7": "", // the file replaces the built-in table
	} {
		if got := c.GeoIP.Country(netip.MustParseAddr(ip)); got != want {
			t.Errorf("Country(%s) = %q, want %q", ip, got, want)
		}
	}
	for name, tc := range map[string]struct{ body, want string }{
		"not a range":    {"10.0.0.0/8,FR\nnope,DE\n", "line 2"},
		"bad country":    {"10.0.0.0/8,FRA\n", "line 1"},
		"missing column": {"10.0.0.0/8\n", "line 1"},
		"extra column":   {"10.0.0.0/8,FR,Paris\n", "line 1"},
		"duplicate":      {"10.0.0.0/8,FR\n10.0.0.1/8,DE\n", "line 2"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := config.Load(env(map[string]string{"GEOIP_FILE": write(strings.ReplaceAll(name, " ", "_")+".csv", tc.body)}))
			if err == nil || !strings.Contains(err.Error(), "GEOIP_FILE") || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("want a GEOIP_FILE error at %s, got %v", tc.want, err)
			}
		})
	}
	if _, err := config.Load(env(map[string]string{"GEOIP_FILE": filepath.Join(dir, "missing.csv")})); err == nil || !strings.Contains(err.Error(), "GEOIP_FILE") {
		t.Fatalf("missing file: %v", err)
	}
}

// TestREADMEListsEveryVariable keeps the README's configuration table in
// step with the variables Load reads.
func TestREADMEListsEveryVariable(t *testing.T) {
	raw, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range config.Variables() {
		if !strings.Contains(string(raw), "| `"+v.Name+"` |") {
			t.Errorf("README.md's configuration table does not list %s", v.Name)
		}
	}
}

// TestPprofAddr: profiling is off unless PPROF_ADDR is set, and only a
// loopback address is accepted.
func TestPprofAddr(t *testing.T) {
	c, err := config.Load(env(map[string]string{}))
	if err != nil {
		t.Fatal(err)
	}
	if c.PprofAddr != "" {
		t.Fatalf("PprofAddr = %q by default, want empty (off)", c.PprofAddr)
	}
	for _, ok := range []string{"127.0.0.1:6060", "[::1]:6060", "localhost:6060", "127.0.0.2:0"} {
		c, err := config.Load(env(map[string]string{"PPROF_ADDR": ok}))
		if err != nil || c.PprofAddr != ok {
			t.Errorf("PPROF_ADDR=%s: %q, %v", ok, c.PprofAddr, err)
		}
	}
	for _, refused := range []string{":6060", "0.0.0.0:6060", "[::]:6060", "192.0.2.1:6060", "example.com:6060", "127.0.0.1", "127.0.0.1:http"} {
		if _, err := config.Load(env(map[string]string{"PPROF_ADDR": refused})); err == nil || !strings.Contains(err.Error(), "PPROF_ADDR") {
			t.Errorf("PPROF_ADDR=%s: error %v, want a PPROF_ADDR refusal", refused, err)
		}
	}
}

// TestMetricsAddrs: the metrics and worker listeners are off by default,
// loopback-only without METRICS_ALLOW, any address with it, and never on
// the API's (or another listener's) port.
func TestMetricsAddrs(t *testing.T) {
	c, err := config.Load(env(map[string]string{}))
	if err != nil {
		t.Fatal(err)
	}
	if c.MetricsAddr != "" || c.WorkerHTTPAddr != "" || c.MetricsAllow != nil {
		t.Fatalf("metrics on by default: %q %q %v", c.MetricsAddr, c.WorkerHTTPAddr, c.MetricsAllow)
	}
	c, err = config.Load(env(map[string]string{"METRICS_ADDR": "127.0.0.1:9090", "WORKER_HTTP_ADDR": "[::1]:9091"}))
	if err != nil || c.MetricsAddr != "127.0.0.1:9090" || c.WorkerHTTPAddr != "[::1]:9091" {
		t.Fatalf("loopback: %+v %v", c, err)
	}
	for name, vars := range map[string]map[string]string{
		"METRICS_ADDR":     {"METRICS_ADDR": ":9090"},
		"WORKER_HTTP_ADDR": {"WORKER_HTTP_ADDR": "0.0.0.0:9091"},
		"METRICS_ALLOW":    {"METRICS_ALLOW": "10.0.0.0/8,nonsense"},
		"must not share":   {"METRICS_ADDR": "127.0.0.1:8080"},
		"PPROF_ADDR":       {"PPROF_ADDR": "127.0.0.1:6060", "WORKER_HTTP_ADDR": "127.0.0.1:6060"},
	} {
		if _, err := config.Load(env(vars)); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%v: error %v, want one naming %s", vars, err, name)
		}
	}
	c, err = config.Load(env(map[string]string{"METRICS_ALLOW": "10.0.0.0/8, 192.0.2.7/32", "METRICS_ADDR": ":9090", "WORKER_HTTP_ADDR": ":9090"}))
	if err != nil || len(c.MetricsAllow) != 2 || c.MetricsAllow[1].String() != "192.0.2.7/32" {
		t.Fatalf("allow-list: %v %v", c.MetricsAllow, err)
	}
}

// TestCheckMultiInstance: INSTANCES above 1 needs a shared Redis
// (REDIS_URL); one instance may use the embedded Redis; INSTANCES must be a
// whole number of at least 1.
func TestCheckMultiInstance(t *testing.T) {
	tests := []struct {
		name             string
		env              map[string]string
		wantLoad, wantMI string
	}{
		{"default: one instance, embedded Redis", map[string]string{}, "", ""},
		{"one instance, embedded Redis", map[string]string{"INSTANCES": "1"}, "", ""},
		{"two instances, shared Redis", map[string]string{"INSTANCES": "2", "REDIS_URL": "redis://redis:6379/0"}, "", ""},
		{"two instances, no Redis", map[string]string{"INSTANCES": "2"}, "", "REDIS_URL"},
		{"ten instances, blank Redis", map[string]string{"INSTANCES": "10", "REDIS_URL": "  "}, "", "REDIS_URL"},
		{"zero", map[string]string{"INSTANCES": "0"}, "INSTANCES", ""},
		{"negative", map[string]string{"INSTANCES": "-2"}, "INSTANCES", ""},
		{"not a number", map[string]string{"INSTANCES": "two"}, "INSTANCES", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := config.Load(env(tc.env))
			if tc.wantLoad != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantLoad) {
					t.Fatalf("Load: want an error naming %s, got %v", tc.wantLoad, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			err = c.CheckMultiInstance()
			if tc.wantMI == "" && err != nil {
				t.Fatalf("CheckMultiInstance: unexpected error %v", err)
			}
			if tc.wantMI != "" && (err == nil || !strings.Contains(err.Error(), tc.wantMI) || !strings.Contains(err.Error(), "INSTANCES")) {
				t.Fatalf("CheckMultiInstance: want an error naming %s and INSTANCES, got %v", tc.wantMI, err)
			}
		})
	}
}

// TestVariablesListEveryReadName: every variable Load reads is in
// Variables (which `platform config`, the README check and the deployment
// checks go by).
func TestVariablesListEveryReadName(t *testing.T) {
	listed := map[string]bool{}
	for _, v := range config.Variables() {
		listed[v.Name] = true
	}
	read := map[string]bool{}
	if _, err := config.Load(func(name string) string { read[name] = true; return "" }); err != nil {
		t.Fatal(err)
	}
	for name := range read {
		if !listed[name] {
			t.Errorf("Load reads %s, which Variables does not list", name)
		}
	}
}
