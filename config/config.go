// Package config loads the platform's configuration from the environment
// into one typed struct, validated at start.
package config

import (
	"bufio"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/netip"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Config is every setting of the platform. Load builds it; nothing reads the
// environment anywhere else.
type Config struct {
	HTTPAddr          string // HTTP_ADDR
	PublicBaseURL     string // PUBLIC_BASE_URL
	DatabaseURL       string // DATABASE_URL
	RedisURL          string // REDIS_URL (empty: embedded)
	TemporalAddress   string // TEMPORAL_ADDRESS
	TemporalNamespace string // TEMPORAL_NAMESPACE
	TemporalUIURL     string // TEMPORAL_UI_URL
	TemporalTaskQueue string // TEMPORAL_TASK_QUEUE
	// TemporalCompression is TEMPORAL_COMPRESSION: gzip or none for the
	// requests to Temporal; auto (the default) is none when
	// TEMPORAL_ADDRESS is a loopback address and gzip otherwise.
	TemporalCompression string
	AdminKey            string // PLATFORM_ADMIN_KEY
	DemoKey             string // PLATFORM_DEMO_KEY
	DemoPassword        string // PLATFORM_DEMO_PASSWORD
	DevSAMLIdPAddr      string // DEV_SAML_IDP_ADDR
	SecretsKey          []byte // SECRETS_KEY (32 bytes, base64 or hex)
	// SecretsKeyPrevious are SECRETS_KEY_PREVIOUS: keys that sealed values
	// may still be under after a rotation (opened, never used to seal).
	SecretsKeyPrevious  [][]byte
	BlobURL             string        // BLOB_URL
	SMTPURL             string        // SMTP_URL
	SMTPFrom            string        // SMTP_FROM
	SMSURL              string        // SMS_URL
	MTLSAddr            string        // MTLS_ADDR
	TLSCertFile         string        // TLS_CERT_FILE
	TLSKeyFile          string        // TLS_KEY_FILE
	ClientCAFile        string        // CLIENT_CA_FILE
	SAMLIdPMetadataURL  string        // SAML_IDP_METADATA_URL
	WebhookAllowPrivate bool          // WEBHOOK_ALLOW_PRIVATE
	TrustedProxies      []string      // TRUSTED_PROXIES (comma-separated CIDRs)
	LogLevel            string        // LOG_LEVEL
	LogFormat           string        // LOG_FORMAT (text|json)
	OTLPEndpoint        string        // OTEL_EXPORTER_OTLP_ENDPOINT (empty: tracing off)
	OTELServiceName     string        // OTEL_SERVICE_NAME (empty: by role)
	ShutdownTimeout     time.Duration // SHUTDOWN_TIMEOUT
	ShutdownDrainDelay  time.Duration // SHUTDOWN_DRAIN_DELAY
	ReportLinkTTL       time.Duration // REPORT_LINK_TTL
	SimulatorStepDelay  time.Duration // SIMULATOR_STEP_DELAY
	TrackerPollInterval time.Duration // TRACKER_POLL_INTERVAL
	AnonymousHourly     int           // ANONYMOUS_HOURLY_LIMIT (cost units per client address per hour)
	AnonymousBurst      int           // ANONYMOUS_BURST_LIMIT (cost units per client address per burst window)

	// SAML_DOMAINS: e-mail domain -> org_ id of just-in-time SAML users.
	SAMLDomains map[string]string
	// SAML_GROUP_ROLES: IdP group -> role (customer, agent, admin).
	SAMLGroupRoles map[string]string

	// TemporalBackgroundTaskQueue is TEMPORAL_BACKGROUND_TASK_QUEUE: the task
	// queue of background work (bulk jobs), polled with its own slot limits.
	TemporalBackgroundTaskQueue string

	// GeoIPFile is GEOIP_FILE: a CSV table of `cidr,country` rows that
	// locates client addresses for the organizations' country restrictions
	// (empty: the built-in table, DefaultGeoIP). GeoIP is that table, loaded.
	GeoIPFile string
	GeoIP     *GeoIP

	// PprofAddr is PPROF_ADDR: the loopback host:port of a separate
	// listener serving Go's profiling endpoints (net/http/pprof); empty
	// turns profiling off. Load refuses any other address.
	PprofAddr string

	// MetricsAddr is METRICS_ADDR: the host:port of the API process's
	// separate /metrics listener (empty: off). WorkerHTTPAddr is
	// WORKER_HTTP_ADDR: the worker process's listener of /healthz, /readyz
	// and /metrics (empty: off). Without MetricsAllow both must be loopback
	// addresses; neither may share a port with HTTP_ADDR, MTLS_ADDR or
	// PPROF_ADDR.
	MetricsAddr    string
	WorkerHTTPAddr string
	// MetricsAllow is METRICS_ALLOW, parsed: the client ranges (besides
	// loopback, always served) that may read the metrics and health
	// listeners; set, the listeners may bind any address.
	MetricsAllow []netip.Prefix

	// Instances is INSTANCES: the most API or worker processes this
	// deployment runs at once (autoscaling included). Above 1 they must
	// share a Redis (CheckMultiInstance), since the embedded one is per
	// process.
	Instances int
}

// Variable documents one environment variable: its name, default and meaning.
type Variable struct {
	Name, Default, Meaning string
}

// Variables lists every variable Load reads, for the README and `platform config`.
func Variables() []Variable {
	return []Variable{
		{"HTTP_ADDR", ":8080", "address the HTTP API listens on"},
		{"PUBLIC_BASE_URL", "http://localhost:8080", "external address of the API: links, JWT issuer and audience"},
		{"DATABASE_URL", "sqlite:.data/platform.db", "postgres://... for PostgreSQL, or sqlite:<path> for a SQLite file"},
		{"REDIS_URL", "(empty: embedded in-process Redis)", "redis://host:port/db for rate-limit counters"},
		{"INSTANCES", "1", "the most API or worker processes this deployment runs at once (the largest replica count, autoscaling included); above 1, serve and worker refuse to start without REDIS_URL, since the embedded Redis is per process (see docs/deployment.md)"},
		{"TEMPORAL_ADDRESS", "localhost:7233", "Temporal frontend host:port"},
		{"TEMPORAL_NAMESPACE", "default", "Temporal namespace"},
		{"TEMPORAL_UI_URL", "http://localhost:8233", "Temporal Web UI address, used in operations' workflow.ui_url"},
		{"TEMPORAL_TASK_QUEUE", "platform", "task queue the worker polls"},
		{"TEMPORAL_COMPRESSION", "auto", "gRPC compression of the requests to Temporal: gzip, none, or auto: none when TEMPORAL_ADDRESS is a loopback address, gzip otherwise"},
		{"TEMPORAL_BACKGROUND_TASK_QUEUE", "<TEMPORAL_TASK_QUEUE>-background", "task queue of background work (bulk jobs), polled by the worker with its own slot limits"},
		{"PLATFORM_ADMIN_KEY", "(empty)", "when set, start-up ensures an admin API key with exactly this value"},
		{"PLATFORM_DEMO_KEY", "(empty)", "when set, start-up ensures a key of the demo tenant with exactly this value"},
		{"PLATFORM_DEMO_PASSWORD", "(empty)", "when set, start-up gives the seeded demo user (demo.user@demo.example) this password, for the portal and the OAuth sign-in pages"},
		{"DEV_SAML_IDP_ADDR", "(empty: off)", "`platform dev` only: host:port where an embedded SAML identity provider (crewjam/saml's samlidp) signs in the demo user (user demo, PLATFORM_DEMO_PASSWORD); used when SAML_IDP_METADATA_URL is empty. Development only"},
		{"SECRETS_KEY", "(required by serve, worker, dev, seed, keys, rekey)", "32 bytes, base64 or hex: encrypts secrets at rest"},
		{"SECRETS_KEY_PREVIOUS", "(empty)", "comma-separated previous SECRETS_KEY values after a rotation: values sealed under them still open; `platform rekey` re-seals them under SECRETS_KEY"},
		{"BLOB_URL", "file:.data/blobs", "blob store of the support area's attachments and report files: file:<folder> (relative to the working directory, made absolute at start) or file:///<folder>, created when missing; s3://<bucket>?region=<region> for S3 (AWS SDK credentials)"},
		{"REPORT_LINK_TTL", "24h", "how long the signed download link of a support report works (a Go duration, 1m to 168h); GET the report for a fresh one"},
		{"SMTP_URL", "(empty: outbox only)", "smtp://[user:password@]host:port (STARTTLS when offered) or smtps://... for e-mail notifications; without it messages wait in the outbox and the portal shows them"},
		{"SMTP_FROM", "Telco Platform <no-reply@localhost>", "sender address of e-mail notifications"},
		{"SMS_URL", "(empty: outbox only)", "http(s) address of the SMS provider: each SMS is POSTed as JSON {to, body, id}"},
		{"MTLS_ADDR", "(empty: off)", "address of the mutual-TLS listener"},
		{"TLS_CERT_FILE", "(empty)", "server certificate (PEM) for the mutual-TLS listener"},
		{"TLS_KEY_FILE", "(empty)", "server key (PEM) for the mutual-TLS listener"},
		{"CLIENT_CA_FILE", "(empty)", "CA bundle (PEM) that client certificates must chain to"},
		{"SAML_IDP_METADATA_URL", "(empty: SAML off)", "identity provider metadata for SAML single sign-on"},
		{"SAML_GROUP_ROLES", "(empty: roles unchanged by groups)", "comma-separated group=role pairs (role customer, agent or admin): a SAML login takes the highest role its groups grant; staff roles only for the provider's own organization"},
		{"SAML_DOMAINS", "(empty: no just-in-time users)", "comma-separated domain=org_id pairs: a SAML login of an unknown e-mail in the domain creates a user of that organization"},
		{"WEBHOOK_ALLOW_PRIVATE", "false", "allow webhook URLs on loopback and private addresses (development, tests)"},
		{"TRUSTED_PROXIES", "(empty)", "comma-separated CIDRs whose X-Forwarded-For is trusted"},
		{"GEOIP_FILE", "(empty: built-in table of the documentation and loopback ranges)", "CSV of cidr,country rows (ISO 3166 alpha-2) locating client addresses for country restrictions; replaces the built-in table"},
		{"PPROF_ADDR", "(empty: off)", "loopback host:port (127.0.0.1:6060, [::1]:6060 or localhost:6060) of a separate listener serving Go's profiling endpoints under /debug/pprof/ (see docs/performance.md); other addresses are refused. Diagnosis only"},
		{"METRICS_ADDR", "(empty: off)", "host:port of the API process's own Prometheus /metrics listener, never the API's port (see docs/operations.md); a loopback address unless METRICS_ALLOW is set"},
		{"WORKER_HTTP_ADDR", "(empty: off)", "host:port of the worker process's listener of /healthz, /readyz and /metrics (see docs/operations.md); a loopback address unless METRICS_ALLOW is set"},
		{"METRICS_ALLOW", "(empty: loopback only)", "comma-separated CIDRs of the clients (Prometheus, the kubelet's probes) that may read METRICS_ADDR and WORKER_HTTP_ADDR besides loopback; when set, those listeners may bind any address and answer 403 to everyone else"},
		{"LOG_LEVEL", "info", "debug, info, warn or error"},
		{"LOG_FORMAT", "text", "text or json (one object per line); every request writes one access-log line, records carry the request's or the activity's ids, and secrets are redacted (see docs/operations.md)"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT", "(empty: tracing off)", "base URL of an OTLP/HTTP collector (http://localhost:4318): traces of API requests, workflows, activities and SQL statements are exported to <URL>/v1/traces, responses carry traceparent and log records trace_id (see docs/operations.md); the other standard OTEL_EXPORTER_OTLP_* and OTEL_TRACES_SAMPLER variables apply"},
		{"OTEL_SERVICE_NAME", "platform-api, platform-worker or platform-dev (by command)", "service name of the exported traces"},
		{"SHUTDOWN_TIMEOUT", "15s", "how long a graceful shutdown waits for requests and activities"},
		{"SHUTDOWN_DRAIN_DELAY", "0s", "API: how long it keeps serving after SIGTERM while /readyz answers 503, so a load balancer stops sending before the listener closes (5s behind a Kubernetes Service; see docs/rolling-restarts.md)"},
		{"SIMULATOR_STEP_DELAY", "2s", "time each simulated network step takes"},
		{"TRACKER_POLL_INTERVAL", "60s", "how often support tracker integrations read their issues' comments and status"},
		{"ANONYMOUS_HOURLY_LIMIT", "1000", "hourly limit, in cost units, of requests without a valid credential, per client address"},
		{"ANONYMOUS_BURST_LIMIT", "100", "burst limit, in cost units, of requests without a valid credential, per client address"},
	}
}

// Load reads the configuration through getenv (os.Getenv in main) and
// validates it; the error names the offending variable.
func Load(getenv func(string) string) (Config, error) {
	get := func(name, def string) string {
		if v := strings.TrimSpace(getenv(name)); v != "" {
			return v
		}
		return def
	}
	c := Config{
		HTTPAddr:            get("HTTP_ADDR", ":8080"),
		PublicBaseURL:       strings.TrimRight(get("PUBLIC_BASE_URL", "http://localhost:8080"), "/"),
		DatabaseURL:         get("DATABASE_URL", "sqlite:.data/platform.db"),
		RedisURL:            get("REDIS_URL", ""),
		TemporalAddress:     get("TEMPORAL_ADDRESS", "localhost:7233"),
		TemporalNamespace:   get("TEMPORAL_NAMESPACE", "default"),
		TemporalUIURL:       strings.TrimRight(get("TEMPORAL_UI_URL", "http://localhost:8233"), "/"),
		TemporalTaskQueue:   get("TEMPORAL_TASK_QUEUE", "platform"),
		TemporalCompression: get("TEMPORAL_COMPRESSION", "auto"),
		AdminKey:            get("PLATFORM_ADMIN_KEY", ""),
		DemoKey:             get("PLATFORM_DEMO_KEY", ""),
		DemoPassword:        get("PLATFORM_DEMO_PASSWORD", ""),
		DevSAMLIdPAddr:      get("DEV_SAML_IDP_ADDR", ""),
		PprofAddr:           get("PPROF_ADDR", ""),
		MetricsAddr:         get("METRICS_ADDR", ""),
		WorkerHTTPAddr:      get("WORKER_HTTP_ADDR", ""),
		BlobURL:             get("BLOB_URL", "file:.data/blobs"),
		SMTPURL:             get("SMTP_URL", ""),
		SMTPFrom:            get("SMTP_FROM", "Telco Platform <no-reply@localhost>"),
		SMSURL:              get("SMS_URL", ""),
		MTLSAddr:            get("MTLS_ADDR", ""),
		TLSCertFile:         get("TLS_CERT_FILE", ""),
		TLSKeyFile:          get("TLS_KEY_FILE", ""),
		ClientCAFile:        get("CLIENT_CA_FILE", ""),
		SAMLIdPMetadataURL:  get("SAML_IDP_METADATA_URL", ""),
		LogLevel:            get("LOG_LEVEL", "info"),
		LogFormat:           get("LOG_FORMAT", "text"),
		OTLPEndpoint:        get("OTEL_EXPORTER_OTLP_ENDPOINT", ""),
		OTELServiceName:     get("OTEL_SERVICE_NAME", ""),
	}
	var errs []string
	bad := func(name, why string) { errs = append(errs, name+": "+why) }
	c.TemporalBackgroundTaskQueue = get("TEMPORAL_BACKGROUND_TASK_QUEUE", c.TemporalTaskQueue+"-background")
	if c.TemporalBackgroundTaskQueue == c.TemporalTaskQueue {
		bad("TEMPORAL_BACKGROUND_TASK_QUEUE", "must differ from TEMPORAL_TASK_QUEUE")
	}

	if _, _, err := net.SplitHostPort(c.HTTPAddr); err != nil {
		bad("HTTP_ADDR", "must be host:port, e.g. :8080")
	}
	if c.DevSAMLIdPAddr != "" {
		if _, _, err := net.SplitHostPort(c.DevSAMLIdPAddr); err != nil {
			bad("DEV_SAML_IDP_ADDR", "must be host:port, e.g. 127.0.0.1:8090")
		}
	}
	if c.PprofAddr != "" {
		if err := CheckLoopbackAddr(c.PprofAddr); err != nil {
			bad("PPROF_ADDR", err.Error())
		}
	}
	c.checkMetricsAddrs(get("METRICS_ALLOW", ""), bad)
	if c.DemoPassword != "" && len(c.DemoPassword) < 12 {
		bad("PLATFORM_DEMO_PASSWORD", "must be at least 12 characters")
	}
	if c.MTLSAddr != "" {
		if _, _, err := net.SplitHostPort(c.MTLSAddr); err != nil {
			bad("MTLS_ADDR", "must be host:port, e.g. :8443")
		}
		if c.TLSCertFile == "" || c.TLSKeyFile == "" || c.ClientCAFile == "" {
			bad("MTLS_ADDR", "needs TLS_CERT_FILE, TLS_KEY_FILE and CLIENT_CA_FILE")
		}
	}
	for name, v := range map[string]string{"PUBLIC_BASE_URL": c.PublicBaseURL, "TEMPORAL_UI_URL": c.TemporalUIURL} {
		if u, err := url.Parse(v); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad(name, "must be an http(s) URL")
		}
	}
	if c.RedisURL != "" {
		if u, err := url.Parse(c.RedisURL); err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") {
			bad("REDIS_URL", "must be redis://host:port/db or rediss://...")
		}
	}
	if _, _, err := net.SplitHostPort(c.TemporalAddress); err != nil {
		bad("TEMPORAL_ADDRESS", "must be host:port, e.g. localhost:7233")
	}
	switch c.TemporalCompression {
	case "auto", "gzip", "none":
	default:
		bad("TEMPORAL_COMPRESSION", "must be auto, gzip or none")
	}
	if raw := getenv("SECRETS_KEY"); strings.TrimSpace(raw) != "" {
		key, err := decodeKey(strings.TrimSpace(raw))
		if err != nil {
			bad("SECRETS_KEY", err.Error())
		}
		c.SecretsKey = key
	}
	for _, raw := range strings.Split(getenv("SECRETS_KEY_PREVIOUS"), ",") {
		if strings.TrimSpace(raw) == "" {
			continue
		}
		key, err := decodeKey(strings.TrimSpace(raw))
		if err != nil {
			bad("SECRETS_KEY_PREVIOUS", err.Error())
			continue
		}
		c.SecretsKeyPrevious = append(c.SecretsKeyPrevious, key)
	}
	var err error
	if c.WebhookAllowPrivate, err = strconv.ParseBool(get("WEBHOOK_ALLOW_PRIVATE", "false")); err != nil {
		bad("WEBHOOK_ALLOW_PRIVATE", "must be true or false")
	}
	if c.ShutdownTimeout, err = time.ParseDuration(get("SHUTDOWN_TIMEOUT", "15s")); err != nil || c.ShutdownTimeout <= 0 {
		bad("SHUTDOWN_TIMEOUT", "must be a positive duration such as 15s")
	}
	if c.ShutdownDrainDelay, err = time.ParseDuration(get("SHUTDOWN_DRAIN_DELAY", "0s")); err != nil || c.ShutdownDrainDelay < 0 {
		bad("SHUTDOWN_DRAIN_DELAY", "must be a duration such as 5s or 0s")
	}
	if c.ReportLinkTTL, err = time.ParseDuration(get("REPORT_LINK_TTL", "24h")); err != nil || c.ReportLinkTTL < time.Minute || c.ReportLinkTTL > 168*time.Hour {
		bad("REPORT_LINK_TTL", "must be a duration from 1m to 168h, such as 24h")
	}
	if c.SimulatorStepDelay, err = time.ParseDuration(get("SIMULATOR_STEP_DELAY", "2s")); err != nil || c.SimulatorStepDelay < 0 {
		bad("SIMULATOR_STEP_DELAY", "must be a duration such as 2s or 0s")
	}
	if c.TrackerPollInterval, err = time.ParseDuration(get("TRACKER_POLL_INTERVAL", "60s")); err != nil || c.TrackerPollInterval < time.Second {
		bad("TRACKER_POLL_INTERVAL", "must be a duration of at least 1s such as 60s")
	}
	if c.Instances, err = strconv.Atoi(get("INSTANCES", "1")); err != nil || c.Instances < 1 {
		bad("INSTANCES", "must be a whole number of at least 1")
	}
	if c.AnonymousHourly, err = strconv.Atoi(get("ANONYMOUS_HOURLY_LIMIT", "1000")); err != nil || c.AnonymousHourly <= 0 {
		bad("ANONYMOUS_HOURLY_LIMIT", "must be a positive whole number of cost units per hour")
	}
	if c.AnonymousBurst, err = strconv.Atoi(get("ANONYMOUS_BURST_LIMIT", "100")); err != nil || c.AnonymousBurst <= 0 {
		bad("ANONYMOUS_BURST_LIMIT", "must be a positive whole number of cost units")
	} else if c.AnonymousHourly > 0 && c.AnonymousBurst > c.AnonymousHourly {
		bad("ANONYMOUS_BURST_LIMIT", "must not exceed ANONYMOUS_HOURLY_LIMIT")
	}
	if domains := get("SAML_DOMAINS", ""); domains != "" {
		c.SAMLDomains = map[string]string{}
		for _, pair := range strings.Split(domains, ",") {
			domain, org, ok := strings.Cut(strings.TrimSpace(pair), "=")
			if !ok || domain == "" || !strings.HasPrefix(org, "org_") {
				bad("SAML_DOMAINS", fmt.Sprintf("%q is not domain=org_id", pair))
				continue
			}
			c.SAMLDomains[strings.ToLower(domain)] = org
		}
	}
	if pairs := get("SAML_GROUP_ROLES", ""); pairs != "" {
		c.SAMLGroupRoles = map[string]string{}
		for _, pair := range strings.Split(pairs, ",") {
			group, role, ok := strings.Cut(strings.TrimSpace(pair), "=")
			if !ok || group == "" || (role != "customer" && role != "agent" && role != "admin") {
				bad("SAML_GROUP_ROLES", fmt.Sprintf("%q is not group=role (customer, agent or admin)", pair))
				continue
			}
			c.SAMLGroupRoles[group] = role
		}
	}
	if c.SMTPURL != "" {
		if u, err := url.Parse(c.SMTPURL); err != nil || (u.Scheme != "smtp" && u.Scheme != "smtps") || u.Hostname() == "" {
			bad("SMTP_URL", "must be smtp://[user:password@]host:port or smtps://...")
		}
	}
	if c.SMSURL != "" {
		if u, err := url.Parse(c.SMSURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("SMS_URL", "must be an http(s) URL")
		}
	}
	if proxies := get("TRUSTED_PROXIES", ""); proxies != "" {
		for _, p := range strings.Split(proxies, ",") {
			p = strings.TrimSpace(p)
			if _, _, err := net.ParseCIDR(p); err != nil {
				bad("TRUSTED_PROXIES", fmt.Sprintf("%q is not a CIDR range", p))
				continue
			}
			c.TrustedProxies = append(c.TrustedProxies, p)
		}
	}
	c.GeoIPFile = get("GEOIP_FILE", "")
	if c.GeoIPFile == "" {
		c.GeoIP = DefaultGeoIP()
	} else if c.GeoIP, err = LoadGeoIP(c.GeoIPFile); err != nil {
		bad("GEOIP_FILE", err.Error())
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		bad("LOG_LEVEL", "must be debug, info, warn or error")
	}
	if c.LogFormat != "text" && c.LogFormat != "json" {
		bad("LOG_FORMAT", "must be text or json")
	}
	if c.OTLPEndpoint != "" {
		if u, err := url.Parse(c.OTLPEndpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("OTEL_EXPORTER_OTLP_ENDPOINT", "must be an http(s) URL, e.g. http://localhost:4318")
		}
	}
	for name, v := range map[string]string{"PLATFORM_ADMIN_KEY": c.AdminKey, "PLATFORM_DEMO_KEY": c.DemoKey} {
		if v != "" && !validKeyShape(v) {
			bad(name, "must be sk_live_ or sk_test_ followed by 56 letters and digits")
		}
	}
	if len(errs) > 0 {
		return Config{}, fmt.Errorf("invalid configuration:\n  %s", strings.Join(errs, "\n  "))
	}
	return c, nil
}

// checkMetricsAddrs validates METRICS_ALLOW, METRICS_ADDR and
// WORKER_HTTP_ADDR: loopback addresses unless an allow-list is set, and
// never a port of the API, the mutual-TLS or the profiling listener.
func (c *Config) checkMetricsAddrs(allow string, bad func(name, why string)) {
	if allow != "" {
		for _, p := range strings.Split(allow, ",") {
			pfx, err := netip.ParsePrefix(strings.TrimSpace(p))
			if err != nil {
				bad("METRICS_ALLOW", fmt.Sprintf("%q is not a CIDR range", strings.TrimSpace(p)))
				continue
			}
			c.MetricsAllow = append(c.MetricsAllow, pfx.Masked())
		}
	}
	taken := map[string]string{}
	for name, addr := range map[string]string{"HTTP_ADDR": c.HTTPAddr, "MTLS_ADDR": c.MTLSAddr, "PPROF_ADDR": c.PprofAddr} {
		if _, port, err := net.SplitHostPort(addr); err == nil && port != "0" {
			taken[port] = name
		}
	}
	for _, v := range []struct{ name, addr string }{{"METRICS_ADDR", c.MetricsAddr}, {"WORKER_HTTP_ADDR", c.WorkerHTTPAddr}} {
		if v.addr == "" {
			continue
		}
		_, port, err := net.SplitHostPort(v.addr)
		if err != nil {
			bad(v.name, "must be host:port, e.g. 127.0.0.1:9090")
			continue
		}
		if other, ok := taken[port]; ok {
			bad(v.name, "must not share its port with "+other+": metrics and health have a listener of their own")
			continue
		}
		if len(c.MetricsAllow) == 0 {
			if err := CheckLoopbackAddr(v.addr); err != nil {
				bad(v.name, err.Error()+" (or set METRICS_ALLOW to the ranges that may scrape it)")
			}
		}
	}
}

// CheckLoopbackAddr accepts a host:port whose host is a loopback IP
// address or "localhost" and whose port is a number: the profiling
// listener (PPROF_ADDR) must never be reachable from another machine, so
// ":6060" (every interface) and host names other than localhost are refused.
func CheckLoopbackAddr(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("must be a loopback host:port such as 127.0.0.1:6060")
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return fmt.Errorf("%q is not a port number", port)
	}
	if host == "localhost" {
		return nil
	}
	ip, err := netip.ParseAddr(host)
	if err != nil || !ip.Unmap().IsLoopback() {
		return fmt.Errorf("%q is not a loopback address: use 127.0.0.1, ::1 or localhost", host)
	}
	return nil
}

// RequireSecrets returns an error naming SECRETS_KEY when it is missing.
func (c Config) RequireSecrets() error {
	if len(c.SecretsKey) == 0 {
		return fmt.Errorf("invalid configuration:\n  SECRETS_KEY: is required (32 random bytes, base64 or hex; e.g. `openssl rand -base64 32`)")
	}
	return nil
}

// CheckMultiInstance returns an error naming REDIS_URL when INSTANCES is
// above 1 and REDIS_URL is empty: each process would then count rate limits
// in an embedded Redis of its own, so a client would get INSTANCES times its
// limits and the workers could not read the API's usage counters. `platform
// serve` and `platform worker` call it; `platform dev` (one process) does not.
func (c Config) CheckMultiInstance() error {
	if c.Instances > 1 && c.RedisURL == "" {
		return fmt.Errorf("invalid configuration:\n  REDIS_URL: is required when INSTANCES is %d (above 1): the embedded Redis is per process, so several instances need a shared one (redis://host:port/db)", c.Instances)
	}
	return nil
}

func decodeKey(s string) ([]byte, error) {
	if b, err := base64.StdEncoding.DecodeString(s); err == nil && len(b) == 32 {
		return b, nil
	}
	if b, err := hex.DecodeString(s); err == nil && len(b) == 32 {
		return b, nil
	}
	return nil, fmt.Errorf("must be 32 bytes encoded as base64 or hex")
}

func validKeyShape(k string) bool {
	rest, ok := strings.CutPrefix(k, "sk_live_")
	if !ok {
		rest, ok = strings.CutPrefix(k, "sk_test_")
	}
	if !ok || len(rest) != 56 {
		return false
	}
	for _, c := range rest {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// GeoIP maps client addresses to ISO 3166-1 alpha-2 country codes by longest
// prefix match over a table of CIDR ranges. It is read-only once built.
type GeoIP struct {
	v4, v6 []geoLevel // by prefix length, longest first
	size   int
}

type geoLevel struct {
	bits      int
	countries map[netip.Prefix]string
}

// defaultGeoIP is the built-in table: only the address ranges reserved for
// documentation (RFC 5737, RFC 3849) and loopback, mapped to countries for
// examples and tests. Real deployments set GEOIP_FILE.
const defaultGeoIP = `cidr,country
192.0.2.0/24,US
198.51.100.0/24,DE
203.0.113.0/24,JP
2001:db8::/32,GB
127.0.0.0/8,XL
::1/128,XL
`

// DefaultGeoIP returns the built-in table: 192.0.2.0/24 US, 198.51.100.0/24
// DE, 203.0.113.0/24 JP, 2001:db8::/32 GB, and loopback (127.0.0.0/8, ::1)
// XL, a user-assigned code. Every other address has no country.
func DefaultGeoIP() *GeoIP {
	t, err := ParseGeoIP(strings.NewReader(defaultGeoIP))
	if err != nil {
		panic("config: built-in GeoIP table: " + err.Error()) // a constant: covered by the tests
	}
	return t
}

// LoadGeoIP reads a GeoIP table from a CSV file (see ParseGeoIP). Errors
// name the file's line.
func LoadGeoIP(path string) (*GeoIP, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %v", path, err)
	}
	defer f.Close()
	t, err := ParseGeoIP(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return t, nil
}

// ParseGeoIP reads a GeoIP table: one `cidr,country` row per line (an
// address alone counts as a /32 or /128), the country a two-letter code;
// blank lines, lines starting with # and a first line `cidr,country` are
// skipped. A range listed twice is an error; overlapping ranges are allowed
// (the longest prefix wins). Errors name the line.
func ParseGeoIP(r io.Reader) (*GeoIP, error) {
	levels := map[int]map[netip.Prefix]string{} // bits (+1000 for IPv6) -> ranges
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") || (n == 1 && strings.EqualFold(strings.ReplaceAll(line, " ", ""), "cidr,country")) {
			continue
		}
		cidr, country, ok := strings.Cut(line, ",")
		cidr, country = strings.TrimSpace(cidr), strings.ToUpper(strings.TrimSpace(country))
		if !ok || strings.Contains(country, ",") {
			return nil, fmt.Errorf("line %d: want cidr,country", n)
		}
		pfx, err := netip.ParsePrefix(cidr)
		if err != nil {
			addr, aerr := netip.ParseAddr(cidr)
			if aerr != nil {
				return nil, fmt.Errorf("line %d: %q is not a CIDR range or an IP address", n, cidr)
			}
			pfx = netip.PrefixFrom(addr, addr.BitLen())
		}
		if len(country) != 2 || country[0] < 'A' || country[0] > 'Z' || country[1] < 'A' || country[1] > 'Z' {
			return nil, fmt.Errorf("line %d: %q is not a two-letter country code", n, country)
		}
		if a := pfx.Addr(); a.Is4In6() { // ::ffff:192.0.2.0/120 is 192.0.2.0/24
			if pfx.Bits() < 96 {
				return nil, fmt.Errorf("line %d: %s mixes IPv4-mapped and IPv6 addresses", n, cidr)
			}
			pfx = netip.PrefixFrom(a.Unmap(), pfx.Bits()-96)
		}
		pfx = pfx.Masked()
		key := pfx.Bits()
		if pfx.Addr().Is6() {
			key += 1000
		}
		if levels[key] == nil {
			levels[key] = map[netip.Prefix]string{}
		}
		if _, dup := levels[key][pfx]; dup {
			return nil, fmt.Errorf("line %d: %s is listed twice", n, pfx)
		}
		levels[key][pfx] = country
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	t := &GeoIP{}
	for key, m := range levels {
		l := geoLevel{bits: key % 1000, countries: m}
		if key >= 1000 {
			t.v6 = append(t.v6, l)
		} else {
			t.v4 = append(t.v4, l)
		}
		t.size += len(m)
	}
	longestFirst := func(a, b geoLevel) int { return b.bits - a.bits }
	slices.SortFunc(t.v4, longestFirst)
	slices.SortFunc(t.v6, longestFirst)
	return t, nil
}

// Country returns the country code of addr ("" when no range holds it, the
// address is invalid, or the table is nil). IPv4-mapped IPv6 addresses are
// looked up as IPv4.
func (t *GeoIP) Country(addr netip.Addr) string {
	if t == nil || !addr.IsValid() {
		return ""
	}
	addr = addr.Unmap()
	levels := t.v6
	if addr.Is4() {
		levels = t.v4
	}
	for _, l := range levels {
		pfx, err := addr.Prefix(l.bits)
		if err != nil {
			continue
		}
		if c, ok := l.countries[pfx]; ok {
			return c
		}
	}
	return ""
}

// Len returns the number of ranges in the table.
func (t *GeoIP) Len() int {
	if t == nil {
		return 0
	}
	return t.size
}
