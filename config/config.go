// Package config loads the platform's configuration from the environment
// into one typed struct, validated at start.
package config

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Config is every setting of the platform. Load builds it; nothing reads the
// environment anywhere else.
type Config struct {
	HTTPAddr            string        // HTTP_ADDR
	PublicBaseURL       string        // PUBLIC_BASE_URL
	DatabaseURL         string        // DATABASE_URL
	RedisURL            string        // REDIS_URL (empty: embedded)
	TemporalAddress     string        // TEMPORAL_ADDRESS
	TemporalNamespace   string        // TEMPORAL_NAMESPACE
	TemporalUIURL       string        // TEMPORAL_UI_URL
	TemporalTaskQueue   string        // TEMPORAL_TASK_QUEUE
	AdminKey            string        // PLATFORM_ADMIN_KEY
	DemoKey             string        // PLATFORM_DEMO_KEY
	SecretsKey          []byte        // SECRETS_KEY (32 bytes, base64 or hex)
	BlobURL             string        // BLOB_URL
	SMTPURL             string        // SMTP_URL
	MTLSAddr            string        // MTLS_ADDR
	TLSCertFile         string        // TLS_CERT_FILE
	TLSKeyFile          string        // TLS_KEY_FILE
	ClientCAFile        string        // CLIENT_CA_FILE
	SAMLIdPMetadataURL  string        // SAML_IDP_METADATA_URL
	WebhookAllowPrivate bool          // WEBHOOK_ALLOW_PRIVATE
	TrustedProxies      []string      // TRUSTED_PROXIES (comma-separated CIDRs)
	LogLevel            string        // LOG_LEVEL
	LogFormat           string        // LOG_FORMAT (text|json)
	ShutdownTimeout     time.Duration // SHUTDOWN_TIMEOUT
	SimulatorStepDelay  time.Duration // SIMULATOR_STEP_DELAY

	// SAML_DOMAINS: e-mail domain -> org_ id of just-in-time SAML users.
	SAMLDomains map[string]string

	// TemporalBackgroundTaskQueue is TEMPORAL_BACKGROUND_TASK_QUEUE: the task
	// queue of background work (bulk jobs), polled with its own slot limits.
	TemporalBackgroundTaskQueue string
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
		{"TEMPORAL_ADDRESS", "localhost:7233", "Temporal frontend host:port"},
		{"TEMPORAL_NAMESPACE", "default", "Temporal namespace"},
		{"TEMPORAL_UI_URL", "http://localhost:8233", "Temporal Web UI address, used in operations' workflow.ui_url"},
		{"TEMPORAL_TASK_QUEUE", "platform", "task queue the worker polls"},
		{"TEMPORAL_BACKGROUND_TASK_QUEUE", "<TEMPORAL_TASK_QUEUE>-background", "task queue of background work (bulk jobs), polled by the worker with its own slot limits"},
		{"PLATFORM_ADMIN_KEY", "(empty)", "when set, start-up ensures an admin API key with exactly this value"},
		{"PLATFORM_DEMO_KEY", "(empty)", "when set, start-up ensures a key of the demo tenant with exactly this value"},
		{"SECRETS_KEY", "(required by serve, worker, dev, seed, keys)", "32 bytes, base64 or hex: encrypts secrets at rest"},
		{"BLOB_URL", "file:.data/blobs", "where attachments and reports are stored"},
		{"SMTP_URL", "(empty: outbox only)", "smtp://host:port for e-mail notifications"},
		{"MTLS_ADDR", "(empty: off)", "address of the mutual-TLS listener"},
		{"TLS_CERT_FILE", "(empty)", "server certificate (PEM) for the mutual-TLS listener"},
		{"TLS_KEY_FILE", "(empty)", "server key (PEM) for the mutual-TLS listener"},
		{"CLIENT_CA_FILE", "(empty)", "CA bundle (PEM) that client certificates must chain to"},
		{"SAML_IDP_METADATA_URL", "(empty: SAML off)", "identity provider metadata for SAML single sign-on"},
		{"SAML_DOMAINS", "(empty: no just-in-time users)", "comma-separated domain=org_id pairs: a SAML login of an unknown e-mail in the domain creates a user of that organization"},
		{"WEBHOOK_ALLOW_PRIVATE", "false", "allow webhook URLs on loopback and private addresses (development, tests)"},
		{"TRUSTED_PROXIES", "(empty)", "comma-separated CIDRs whose X-Forwarded-For is trusted"},
		{"LOG_LEVEL", "info", "debug, info, warn or error"},
		{"LOG_FORMAT", "text", "text or json"},
		{"SHUTDOWN_TIMEOUT", "15s", "how long a graceful shutdown waits for requests and activities"},
		{"SIMULATOR_STEP_DELAY", "2s", "time each simulated network step takes"},
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
		HTTPAddr:           get("HTTP_ADDR", ":8080"),
		PublicBaseURL:      strings.TrimRight(get("PUBLIC_BASE_URL", "http://localhost:8080"), "/"),
		DatabaseURL:        get("DATABASE_URL", "sqlite:.data/platform.db"),
		RedisURL:           get("REDIS_URL", ""),
		TemporalAddress:    get("TEMPORAL_ADDRESS", "localhost:7233"),
		TemporalNamespace:  get("TEMPORAL_NAMESPACE", "default"),
		TemporalUIURL:      strings.TrimRight(get("TEMPORAL_UI_URL", "http://localhost:8233"), "/"),
		TemporalTaskQueue:  get("TEMPORAL_TASK_QUEUE", "platform"),
		AdminKey:           get("PLATFORM_ADMIN_KEY", ""),
		DemoKey:            get("PLATFORM_DEMO_KEY", ""),
		BlobURL:            get("BLOB_URL", "file:.data/blobs"),
		SMTPURL:            get("SMTP_URL", ""),
		MTLSAddr:           get("MTLS_ADDR", ""),
		TLSCertFile:        get("TLS_CERT_FILE", ""),
		TLSKeyFile:         get("TLS_KEY_FILE", ""),
		ClientCAFile:       get("CLIENT_CA_FILE", ""),
		SAMLIdPMetadataURL: get("SAML_IDP_METADATA_URL", ""),
		LogLevel:           get("LOG_LEVEL", "info"),
		LogFormat:          get("LOG_FORMAT", "text"),
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
	if raw := getenv("SECRETS_KEY"); strings.TrimSpace(raw) != "" {
		key, err := decodeKey(strings.TrimSpace(raw))
		if err != nil {
			bad("SECRETS_KEY", err.Error())
		}
		c.SecretsKey = key
	}
	var err error
	if c.WebhookAllowPrivate, err = strconv.ParseBool(get("WEBHOOK_ALLOW_PRIVATE", "false")); err != nil {
		bad("WEBHOOK_ALLOW_PRIVATE", "must be true or false")
	}
	if c.ShutdownTimeout, err = time.ParseDuration(get("SHUTDOWN_TIMEOUT", "15s")); err != nil || c.ShutdownTimeout <= 0 {
		bad("SHUTDOWN_TIMEOUT", "must be a positive duration such as 15s")
	}
	if c.SimulatorStepDelay, err = time.ParseDuration(get("SIMULATOR_STEP_DELAY", "2s")); err != nil || c.SimulatorStepDelay < 0 {
		bad("SIMULATOR_STEP_DELAY", "must be a duration such as 2s or 0s")
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
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		bad("LOG_LEVEL", "must be debug, info, warn or error")
	}
	if c.LogFormat != "text" && c.LogFormat != "json" {
		bad("LOG_FORMAT", "must be text or json")
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

// RequireSecrets returns an error naming SECRETS_KEY when it is missing.
func (c Config) RequireSecrets() error {
	if len(c.SecretsKey) == 0 {
		return fmt.Errorf("invalid configuration:\n  SECRETS_KEY: is required (32 random bytes, base64 or hex; e.g. `openssl rand -base64 32`)")
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
