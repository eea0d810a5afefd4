package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"text/tabwriter"
	"time"

	"github.com/telcoplatform/platform/auth"
	"github.com/telcoplatform/platform/config"
	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/identity"
)

const signingKeysUsage = "usage: platform signing-keys list | rotate | retire KID"

// signingKeysCommand lists, rotates and retires the access tokens' signing
// keys (docs/operations.md, "Rotating the JWT signing key"). A rotation
// adds a key that signs from then on while the older ones keep verifying;
// every API process picks the change up within auth.KeyRefreshInterval.
func signingKeysCommand(ctx context.Context, cfg config.Config, log *slog.Logger, args []string, stdout io.Writer) error {
	if len(args) == 0 || (args[0] == "retire") != (len(args) == 2) || len(args) > 2 {
		return errors.New(signingKeysUsage)
	}
	store, closeDB, err := openStore(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer closeDB()
	ring := auth.NewKeyRing(store, nil)
	switch args[0] {
	case "list":
		keys, err := identity.NewStore(store).SigningKeys(ctx)
		if err != nil {
			return err
		}
		w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(w, "KID\tALGORITHM\tCREATED\tSTATE")
		signing := true
		for _, k := range keys {
			state := "verifies"
			switch {
			case k.RetiredAt != nil:
				state = "retired " + models.Timestamp(*k.RetiredAt)
			case signing:
				state, signing = "signs and verifies", false
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", k.ID, k.Algorithm, models.Timestamp(k.CreatedAt), state)
		}
		return w.Flush()
	case "rotate":
		kid, err := ring.Rotate(ctx)
		if err != nil {
			return fmt.Errorf("rotate: %w", err)
		}
		fmt.Fprintf(stdout, "new signing key %s: every API process signs with it within %s; the older keys keep verifying until retired\n", kid, auth.KeyRefreshInterval)
		return nil
	case "retire":
		if err := ring.RetireKey(ctx, args[1]); err != nil {
			return fmt.Errorf("retire %s: %w", args[1], err)
		}
		fmt.Fprintf(stdout, "retired %s: tokens it signed are refused by every API process within %s\n", args[1], auth.KeyRefreshInterval)
		return nil
	}
	return errors.New(signingKeysUsage)
}

// healthcheckCommand asks a health address of a running process (the API's
// /readyz, a worker's WORKER_HTTP_ADDR /readyz) and fails unless it answers
// 200: a container health check for images without a shell or an HTTP
// client. Only loopback addresses are asked.
func healthcheckCommand(ctx context.Context, args []string, stdout io.Writer) error {
	if len(args) != 1 {
		return errors.New("usage: platform healthcheck http://127.0.0.1:PORT/readyz")
	}
	u, err := url.Parse(args[0])
	if err != nil || u.Scheme != "http" || u.Host == "" {
		return fmt.Errorf("healthcheck: %q is not an http:// address", args[0])
	}
	if err := config.CheckLoopbackAddr(u.Host); err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return err
	}
	// A redirect is an answer, not an address to follow: only the loopback
	// address given is asked.
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("healthcheck: %s answered %d", u.String(), resp.StatusCode)
	}
	fmt.Fprintln(stdout, "ok")
	return nil
}
