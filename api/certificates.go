package api

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/http"
	"strings"

	"github.com/danielgtaylor/huma/v2"
	"github.com/gofiber/fiber/v2"

	"github.com/telcoplatform/platform/auth"
	"github.com/telcoplatform/platform/models"
)

// CertificateBody is the certificate registration body (spec 2.6).
type CertificateBody struct {
	Certificate string   `json:"certificate" maxLength:"20000" doc:"one PEM CERTIFICATE block, issued by the platform's client CA"`
	Name        string   `json:"name" maxLength:"200"`
	Permissions []string `json:"permissions" doc:"what requests authenticated by this certificate may do"`
}

// CertificateItem is a registered client certificate.
type CertificateItem struct {
	ID                string   `json:"id" example:"cert_3fK9aZ"`
	Name              string   `json:"name"`
	FingerprintSHA256 string   `json:"fingerprint_sha256" doc:"hex SHA-256 of the DER certificate: how a presented certificate is matched"`
	Subject           string   `json:"subject"`
	Issuer            string   `json:"issuer"`
	SerialNumber      string   `json:"serial_number"`
	Permissions       []string `json:"permissions"`
	OrganizationID    string   `json:"organization_id"`
	Environment       string   `json:"environment"`
	NotBefore         string   `json:"not_before"`
	NotAfter          string   `json:"not_after"`
	CreatedAt         string   `json:"created_at"`
}

// CertificateOutput is the answer of certificate registration.
type CertificateOutput struct {
	Status int
	Body   struct {
		Envelope
		Certificate CertificateItem `json:"certificate"`
	}
}

func (s *Server) registerCertificates() {
	var pool *x509.CertPool
	if s.cfg.ClientCAFile != "" {
		p, err := auth.LoadCAPool(s.cfg.ClientCAFile)
		if err != nil {
			s.log.Error("client CA bundle unreadable: certificate registration is off", "error", err)
		}
		pool = p
	}
	register(s, huma.Operation{OperationID: "register-certificate", Method: http.MethodPost, Path: "/auth/certificates", Summary: "Register a client certificate for mutual TLS",
		Description: "The certificate must be valid now, for client authentication, and issued by the platform's client CA (CLIENT_CA_FILE). Requests on the mutual-TLS listener that present it act in the registrant's organization and environment with its permissions.",
		Tags:        []string{"Authentication"}, DefaultStatus: http.StatusCreated,
	}, access{permission: "auth:manage", mfa: true}, func(ctx context.Context, in *struct{ Body CertificateBody }) (*CertificateOutput, error) {
		cert, err := auth.ParseClientCertificate(in.Body.Certificate, pool, s.now())
		if err != nil {
			return nil, err
		}
		row := &models.ClientCertificate{Name: strings.TrimSpace(in.Body.Name), FingerprintSHA256: auth.Fingerprint(cert),
			Subject: cert.Subject.String(), Issuer: cert.Issuer.String(), SerialNumber: cert.SerialNumber.String(),
			NotBefore: cert.NotBefore.UTC(), NotAfter: cert.NotAfter.UTC()}
		row, err = s.store.RegisterCertificate(ctx, principal(ctx), row, in.Body.Permissions)
		if err != nil {
			return nil, err
		}
		s.audit(ctx, models.AuditEvent{EventType: models.AuditCertRegistered, OrganizationID: row.OrganizationID, UserID: principal(ctx).UserID,
			AuthenticationMethod: "mtls", Reason: row.FingerprintSHA256})
		out := &CertificateOutput{Status: http.StatusCreated}
		out.Body.Certificate = CertificateItem{ID: row.ID, Name: row.Name, FingerprintSHA256: row.FingerprintSHA256, Subject: row.Subject, Issuer: row.Issuer,
			SerialNumber: row.SerialNumber, Permissions: row.PermissionList(), OrganizationID: row.OrganizationID, Environment: string(row.Environment),
			NotBefore: models.Timestamp(row.NotBefore), NotAfter: models.Timestamp(row.NotAfter), CreatedAt: models.Timestamp(row.CreatedAt)}
		return out, nil
	})
}

// resolveCertificate authenticates a request on the mutual-TLS listener by
// its verified peer certificate's fingerprint; requests without one pass on.
// Errors: UNAUTHENTICATED (unregistered or expired registration).
func (s *Server) resolveCertificate(c *fiber.Ctx) error {
	state := c.Context().TLSConnectionState()
	if state == nil || len(state.PeerCertificates) == 0 || len(state.VerifiedChains) == 0 {
		return nil
	}
	ctx := c.UserContext()
	reg, org, err := s.store.CertificateByFingerprint(ctx, auth.Fingerprint(state.PeerCertificates[0]))
	if err != nil {
		return err
	}
	p := &models.Principal{Kind: models.PrincipalCertificate, ID: reg.ID, OrganizationID: reg.OrganizationID, Environment: reg.Environment,
		Role: models.RoleCustomer, Permissions: reg.PermissionList(), Limits: models.EffectiveLimits(org, 0, 0)}
	c.SetUserContext(models.WithPrincipal(ctx, p))
	return nil
}

// ServeMTLS serves the API on ln with mutual TLS (client certificates
// verified against CLIENT_CA_FILE when given) until the app shuts down.
func (s *Server) ServeMTLS(ln net.Listener, cfg *tls.Config) error {
	return s.App.Listener(tls.NewListener(ln, cfg))
}

// RunMTLS listens on MTLS_ADDR with the configured server certificate and
// client CA until ctx ends (Run shuts the app down).
func (s *Server) RunMTLS(ctx context.Context) error {
	cfg, err := auth.MTLSConfig(s.cfg.TLSCertFile, s.cfg.TLSKeyFile, s.cfg.ClientCAFile)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", s.cfg.MTLSAddr)
	if err != nil {
		return err
	}
	errc := make(chan error, 1)
	go func() { errc <- s.ServeMTLS(ln, cfg) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		_ = ln.Close()
		return nil
	}
}
