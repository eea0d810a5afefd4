package temporalclient_test

import (
	"testing"

	"github.com/telcoplatform/platform/temporalclient"
)

// TestCompress: auto leaves loopback servers' requests uncompressed and
// gzips the others; gzip and none are what they say.
func TestCompress(t *testing.T) {
	tests := []struct {
		compression, address string
		want                 bool
	}{
		{"auto", "localhost:7233", false},
		{"auto", "127.0.0.1:7233", false},
		{"auto", "127.0.0.5:7233", false},
		{"auto", "[::1]:7233", false},
		{"", "127.0.0.1:7233", false},
		{"auto", "temporal.internal:7233", true},
		{"auto", "10.0.0.7:7233", true},
		{"auto", "[2001:db8::1]:7233", true},
		{"auto", "not an address", true},
		{"gzip", "127.0.0.1:7233", true},
		{"none", "temporal.internal:7233", false},
	}
	for _, tc := range tests {
		if got := temporalclient.Compress(tc.compression, tc.address); got != tc.want {
			t.Errorf("Compress(%q, %q) = %v, want %v", tc.compression, tc.address, got, tc.want)
		}
	}
}
