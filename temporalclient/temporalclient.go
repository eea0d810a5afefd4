// Package temporalclient builds the Temporal client from configuration and
// registers the platform's search attributes on a server.
package temporalclient

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"

	"github.com/telcoplatform/platform/config"
	"github.com/telcoplatform/platform/tracing"
	"github.com/telcoplatform/platform/workflows"
)

// Options says where the Temporal frontend is.
type Options struct {
	Address   string
	Namespace string
	Logger    *slog.Logger
	// Metrics receives the SDK's own metrics (nil: none).
	Metrics client.MetricsHandler
	// Tracing adds the SDK's OpenTelemetry interceptor to the client and
	// to the workers built from it (nil or off: none).
	Tracing *tracing.Provider
	// Identity names the client, and the workers built from it, to the
	// server (its pollers' identity in DescribeTaskQueue and the UI's
	// workers list); "" is the SDK's default. See Identity.
	Identity string
	// Compression is "gzip" or "none" for the requests to the server;
	// "auto" or "" is none when Address is a loopback address and gzip
	// otherwise (see Compress).
	Compression string
}

// Compress reports whether requests to the server at address are gzipped
// under the setting compression (auto, gzip or none). Auto leaves a
// loopback server's requests as they are: compressing a few hundred bytes
// costs both sides CPU (a tenth of a millisecond per workflow start in
// the API process) and saves nothing on loopback.
func Compress(compression, address string) bool {
	switch compression {
	case "gzip":
		return true
	case "none":
		return false
	}
	return config.CheckLoopbackAddr(address) != nil
}

// Identity returns the identity of this process in role ("platform-worker",
// "platform-dev"...): the SDK's own form, pid@host, with the role in place
// of its empty task-queue part.
func Identity(role string) string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown"
	}
	return fmt.Sprintf("%d@%s@%s", os.Getpid(), host, role)
}

// NewLazy returns a client that connects on first use, so the API starts
// (and reports unready) while Temporal is down.
func NewLazy(opts Options) (client.Client, error) {
	o, err := clientOptions(opts)
	if err != nil {
		return nil, err
	}
	return client.NewLazyClient(o)
}

// Dial connects to Temporal and checks the connection.
func Dial(ctx context.Context, opts Options) (client.Client, error) {
	o, err := clientOptions(opts)
	if err != nil {
		return nil, err
	}
	c, err := client.DialContext(ctx, o)
	if err != nil {
		return nil, fmt.Errorf("connect to Temporal at %s: %w", opts.Address, err)
	}
	return c, nil
}

func clientOptions(opts Options) (client.Options, error) {
	o := client.Options{HostPort: opts.Address, Namespace: opts.Namespace, MetricsHandler: opts.Metrics, Identity: opts.Identity}
	if !Compress(opts.Compression, opts.Address) {
		o.ConnectionOptions.GrpcCompression = &client.GrpcCompressionNone{}
	}
	if opts.Logger != nil {
		o.Logger = tlog.NewStructuredLogger(opts.Logger.With("component", "temporal"))
	}
	interceptors, err := opts.Tracing.TemporalInterceptors()
	if err != nil {
		return client.Options{}, err
	}
	o.Interceptors = interceptors
	return o, nil
}

// EnsureSearchAttributes registers the platform's custom search attributes in
// the client's namespace, skipping those already present.
func EnsureSearchAttributes(ctx context.Context, c client.Client, namespace string) error {
	svc := c.OperatorService()
	existing, err := svc.ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: namespace})
	if err != nil {
		return fmt.Errorf("list search attributes: %w", err)
	}
	missing := map[string]enums.IndexedValueType{}
	for _, sa := range workflows.SearchAttributes() {
		if _, ok := existing.GetCustomAttributes()[sa.Name]; !ok {
			missing[sa.Name] = sa.Type
		}
	}
	if len(missing) == 0 {
		return nil
	}
	_, err = svc.AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{Namespace: namespace, SearchAttributes: missing})
	if err != nil {
		return fmt.Errorf("add search attributes: %w", err)
	}
	return nil
}
