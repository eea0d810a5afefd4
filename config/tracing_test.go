package config_test

import (
	"strings"
	"testing"

	"github.com/telcoplatform/platform/config"
)

// TestTracingVariables: tracing is off by default; an endpoint must be an
// http(s) URL; the service name is read as given.
func TestTracingVariables(t *testing.T) {
	c, err := config.Load(env(map[string]string{}))
	if err != nil {
		t.Fatal(err)
	}
	if c.OTLPEndpoint != "" || c.OTELServiceName != "" {
		t.Fatalf("defaults %q %q", c.OTLPEndpoint, c.OTELServiceName)
	}
	c, err = config.Load(env(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_SERVICE_NAME": "api-eu"}))
	if err != nil || c.OTLPEndpoint != "http://127.0.0.1:4318" || c.OTELServiceName != "api-eu" {
		t.Fatalf("%q %q: %v", c.OTLPEndpoint, c.OTELServiceName, err)
	}
	for _, bad := range []string{"127.0.0.1:4318", "grpc://collector:4317", "http://"} {
		if _, err := config.Load(env(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": bad})); err == nil || !strings.Contains(err.Error(), "OTEL_EXPORTER_OTLP_ENDPOINT") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}
