package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/telcoplatform/platform/testenv"
)

// TestSeveralInstancesNeedRedis: with INSTANCES=2 and no REDIS_URL, `serve`
// and `worker` refuse to start with an error naming REDIS_URL (the embedded
// Redis is per process), while `migrate` runs.
func TestSeveralInstancesNeedRedis(t *testing.T) {
	for _, cmd := range []string{"serve", "worker"} {
		t.Run(cmd, func(t *testing.T) {
			env := envFor(t, map[string]string{"INSTANCES": "2", "HTTP_ADDR": fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t)), "TEMPORAL_ADDRESS": "127.0.0.1:1"})
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			err := run(ctx, []string{cmd}, env, &bytes.Buffer{})
			if err == nil || !strings.Contains(err.Error(), "REDIS_URL") || !strings.Contains(err.Error(), "INSTANCES") {
				t.Fatalf("%s with INSTANCES=2 and no REDIS_URL: want an error naming REDIS_URL and INSTANCES, got %v", cmd, err)
			}
		})
	}
	if err := run(context.Background(), []string{"migrate"}, envFor(t, map[string]string{"INSTANCES": "2"}), &bytes.Buffer{}); err != nil {
		t.Fatalf("migrate with INSTANCES=2: %v", err)
	}
}
