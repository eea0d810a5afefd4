package main

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"log/slog"

	"github.com/telcoplatform/platform/auth"
	"github.com/telcoplatform/platform/config"
	"github.com/telcoplatform/platform/devidp"
	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/identity"
	"github.com/telcoplatform/platform/models/seed"
)

// devIdPUser is the demo user's name at the development identity provider.
const devIdPUser = "demo"

// startDevIdP runs crewjam/saml's samlidp, a real SAML identity provider,
// on DEV_SAML_IDP_ADDR for `platform dev`, so single sign-on to the portal
// works on a fresh machine: it points cfg at the IdP's metadata, lets
// demo.example e-mails sign in to the demo tenant, registers the platform as
// a service provider and the demo user (PLATFORM_DEMO_PASSWORD). It returns
// a function that stops the IdP. Production configures SAML_IDP_METADATA_URL.
func startDevIdP(ctx context.Context, cfg *config.Config, store *models.Store, log *slog.Logger) (func(), error) {
	if cfg.DemoPassword == "" {
		return nil, errors.New("DEV_SAML_IDP_ADDR needs PLATFORM_DEMO_PASSWORD (the demo user's password at the IdP)")
	}
	idp, err := devidp.Start(cfg.DevSAMLIdPAddr, slog.NewLogLogger(log.With("component", "dev-idp").Handler(), slog.LevelDebug))
	if err != nil {
		return nil, fmt.Errorf("DEV_SAML_IDP_ADDR: %w", err)
	}
	stop := func() { _ = idp.Close() }
	base := idp.URL

	demo, err := seed.NewStore(store).DemoOrganization(ctx)
	if err != nil {
		stop()
		return nil, fmt.Errorf("DEV_SAML_IDP_ADDR needs the demo tenant: run `platform seed` first")
	}
	cfg.SAMLIdPMetadataURL = base + "/metadata"
	if cfg.SAMLDomains == nil {
		cfg.SAMLDomains = map[string]string{}
	}
	if _, ok := cfg.SAMLDomains["demo.example"]; !ok {
		cfg.SAMLDomains["demo.example"] = demo.ID
	}
	// Register the platform (its service-provider metadata) and the demo user.
	sp, err := auth.NewSAML(store, cfg.PublicBaseURL, cfg.SAMLIdPMetadataURL).ServiceProvider(ctx)
	if err == nil {
		var md []byte
		if md, err = xml.Marshal(auth.Metadata(sp)); err == nil {
			err = idp.AddServiceProvider(ctx, "platform", md)
		}
	}
	if err == nil {
		err = idp.AddUser(ctx, devidp.User{Name: devIdPUser, Email: identity.DemoUserEmail, Password: cfg.DemoPassword,
			CommonName: "Demo User", Groups: []string{"customers"}})
	}
	if err != nil {
		stop()
		return nil, fmt.Errorf("development IdP: %w", err)
	}
	log.Info("development SAML identity provider", "url", base, "user", devIdPUser)
	return stop, nil
}
