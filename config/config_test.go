package config_test

import (
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
