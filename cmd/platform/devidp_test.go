package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/telcoplatform/platform/config"
	"github.com/telcoplatform/platform/models/seed"
)

// TestDevIdP starts the development identity provider as `platform dev`
// does: the configuration points at its metadata, demo.example joins the
// demo tenant, the platform is registered with it, and a missing password
// or a busy address is a clear error. The sign-in through it is the portal
// browser test's.
func TestDevIdP(t *testing.T) {
	ctx := context.Background()
	cfg, err := config.Load(envFor(t, map[string]string{"PLATFORM_DEMO_PASSWORD": "a demo password", "DEV_SAML_IDP_ADDR": "127.0.0.1:0"}))
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	store, closeDB, err := openStore(ctx, cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	defer closeDB()
	if _, err := seed.NewStore(store).Seed(ctx); err != nil {
		t.Fatal(err)
	}
	demo, err := seed.NewStore(store).DemoOrganization(ctx)
	if err != nil {
		t.Fatal(err)
	}

	noPassword := cfg
	noPassword.DemoPassword = ""
	if _, err := startDevIdP(ctx, &noPassword, store, log); err == nil || !strings.Contains(err.Error(), "PLATFORM_DEMO_PASSWORD") {
		t.Fatalf("without a password: %v", err)
	}
	stop, err := startDevIdP(ctx, &cfg, store, log)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if !strings.HasSuffix(cfg.SAMLIdPMetadataURL, "/metadata") || cfg.SAMLDomains["demo.example"] != demo.ID {
		t.Fatalf("configuration after start: %q %v", cfg.SAMLIdPMetadataURL, cfg.SAMLDomains)
	}
	res, err := http.Get(cfg.SAMLIdPMetadataURL)
	if err != nil {
		t.Fatal(err)
	}
	md, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(string(md), "IDPSSODescriptor") {
		t.Fatalf("IdP metadata: %d %.200s", res.StatusCode, md)
	}
	busy := cfg
	busy.DevSAMLIdPAddr = strings.TrimPrefix(strings.TrimSuffix(cfg.SAMLIdPMetadataURL, "/metadata"), "http://")
	busy.SAMLIdPMetadataURL = ""
	if _, err := startDevIdP(ctx, &busy, store, log); err == nil || !strings.Contains(err.Error(), "DEV_SAML_IDP_ADDR") {
		t.Fatalf("on a busy address: %v", err)
	}
}
