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
	"github.com/telcoplatform/platform/models/identity"
)

// CertificateBody is the certificate registration body.
type CertificateBody struct {
	Certificate string   `json:"certificate" maxLength:"20000" example:"-----BEGIN CERTIFICATE-----\nMIIB...\n-----END CERTIFICATE-----\n" doc:"one PEM CERTIFICATE block, issued by the platform's client CA"`
	Name        string   `json:"name" maxLength:"200" example:"build-agent"`
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
	Status            string   `json:"status" enum:"active,revoked,expired,not_yet_valid" doc:"revoked and expired certificates are refused on the mutual-TLS listener"`
	CreatedAt         string   `json:"created_at"`
	RevokedAt         *string  `json:"revoked_at,omitempty" doc:"when the registration was revoked"`
}

// CertificateOutput is the answer of certificate registration, reading and revocation.
type CertificateOutput struct {
	Status int
	Body   struct {
		Envelope
		Certificate CertificateItem `json:"certificate"`
	}
}

// CertificatesOutput is a page of registered certificates.
type CertificatesOutput struct {
	Body struct {
		Envelope
		Certificates []CertificateItem `json:"certificates"`
		Pagination   Pagination        `json:"pagination"`
	}
}

type certificatePath struct {
	CertificateID string `path:"certificate_id" maxLength:"64" example:"cert_3fK9aZ"`
}

func (s *Server) certificateItem(row *identity.ClientCertificate) CertificateItem {
	return CertificateItem{ID: row.ID, Name: row.Name, FingerprintSHA256: row.FingerprintSHA256, Subject: row.Subject, Issuer: row.Issuer,
		SerialNumber: row.SerialNumber, Permissions: nonNil(row.PermissionList()), OrganizationID: row.OrganizationID, Environment: string(row.Environment),
		NotBefore: models.Timestamp(row.NotBefore), NotAfter: models.Timestamp(row.NotAfter), Status: row.Status(s.now()),
		CreatedAt: models.Timestamp(row.CreatedAt), RevokedAt: optTimestamp(row.RevokedAt)}
}

func (s *Server) certificateOutput(row *identity.ClientCertificate, status int) *CertificateOutput {
	out := &CertificateOutput{Status: status}
	out.Body.Certificate = s.certificateItem(row)
	return out
}

func (s *Server) registerCertificates() {
	if s.cfg.ClientCAFile != "" {
		p, err := auth.LoadCAPool(s.cfg.ClientCAFile)
		if err != nil {
			s.log.Error("client CA bundle unreadable: certificate registration is off", "error", err)
		}
		s.clientCAs = p
	}
	pool := s.clientCAs
	register(s, huma.Operation{OperationID: "register-certificate", Method: http.MethodPost, Path: "/auth/certificates", Summary: "Register a client certificate for mutual TLS",
		Description: "The certificate must be valid now, for client authentication, and issued by the platform's client CA (CLIENT_CA_FILE). Requests on the mutual-TLS listener that present it act in the registrant's organization and environment with its permissions.",
		Tags:        []string{"Authentication"}, DefaultStatus: http.StatusCreated,
	}, access{permission: "auth:manage", mfa: true}, func(ctx context.Context, in *struct{ Body CertificateBody }) (*CertificateOutput, error) {
		cert, err := auth.ParseClientCertificate(in.Body.Certificate, pool, s.now())
		if err != nil {
			return nil, err
		}
		row := &identity.ClientCertificate{Name: strings.TrimSpace(in.Body.Name), FingerprintSHA256: auth.Fingerprint(cert),
			Subject: cert.Subject.String(), Issuer: cert.Issuer.String(), SerialNumber: cert.SerialNumber.String(),
			NotBefore: cert.NotBefore.UTC(), NotAfter: cert.NotAfter.UTC()}
		row, err = s.identity.RegisterCertificate(ctx, principal(ctx), row, in.Body.Permissions)
		if err != nil {
			return nil, err
		}
		s.audit(ctx, identity.AuditEvent{EventType: identity.AuditCertRegistered, OrganizationID: row.OrganizationID, UserID: principal(ctx).UserID,
			AuthenticationMethod: "mtls", Reason: row.FingerprintSHA256})
		return s.certificateOutput(row, http.StatusCreated), nil
	})
	s.registerCertificateManagement()
}

// registerCertificateManagement registers the list, read and revocation of
// registered certificates (docs/authentication.md, "Mutual TLS").
func (s *Server) registerCertificateManagement() {
	tags := []string{"Authentication"}
	manage := access{permission: "auth:manage"}
	register(s, huma.Operation{OperationID: "list-certificates", Method: http.MethodGet, Path: "/auth/certificates", Summary: "List registered client certificates",
		Description: "The registrations of the caller's organization and environment, revoked ones included (marked), newest first. Filter `status`: active, revoked, expired, not_yet_valid; sortable by created_at, name, not_after, revoked_at.",
		Tags:        tags,
	}, manage, func(ctx context.Context, in *struct {
		ListParams
		Status string `query:"status" enum:"active,revoked,expired,not_yet_valid" doc:"only registrations in this status"`
	}) (*CertificatesOutput, error) {
		pr, err := in.page()
		if err != nil {
			return nil, err
		}
		rows, total, err := s.identity.ListCertificates(ctx, principal(ctx), identity.CertificateFilter{Status: in.Status}, pr)
		if err != nil {
			return nil, err
		}
		out := &CertificatesOutput{}
		out.Body.Certificates = mapSlice(rows, s.certificateItem)
		out.Body.Pagination = newPagination(pr, total)
		return out, nil
	})
	register(s, huma.Operation{OperationID: "get-certificate", Method: http.MethodGet, Path: "/auth/certificates/{certificate_id}", Summary: "Get a registered client certificate",
		Description: "Another tenant's registration is 404.", Tags: tags,
	}, manage, func(ctx context.Context, in *certificatePath) (*CertificateOutput, error) {
		row, err := s.identity.GetCertificate(ctx, principal(ctx), in.CertificateID)
		if err != nil {
			return nil, err
		}
		return s.certificateOutput(row, http.StatusOK), nil
	})
	register(s, huma.Operation{OperationID: "revoke-certificate", Method: http.MethodDelete, Path: "/auth/certificates/{certificate_id}", Summary: "Revoke a registered client certificate",
		Description: "From now on a request on the mutual-TLS listener presenting this certificate is refused (401 UNAUTHENTICATED). The registration is kept, " +
			"with status revoked and revoked_at, for audit; revoking twice is harmless. The same certificate can be registered again afterwards.",
		Tags: tags,
	}, manage, func(ctx context.Context, in *certificatePath) (*CertificateOutput, error) {
		row, revoked, err := s.identity.RevokeCertificate(ctx, principal(ctx), in.CertificateID)
		if err != nil {
			return nil, err
		}
		if revoked {
			s.audit(ctx, identity.AuditEvent{EventType: identity.AuditCertRevoked, OrganizationID: row.OrganizationID, UserID: principal(ctx).UserID,
				AuthenticationMethod: "mtls", Reason: row.FingerprintSHA256})
		}
		return s.certificateOutput(row, http.StatusOK), nil
	})
}

// resolveCertificate authenticates a request on the mutual-TLS listener by
// its verified peer certificate's fingerprint; requests without one pass on.
// Errors: UNAUTHENTICATED (unregistered, revoked or expired registration).
func (s *Server) resolveCertificate(c *fiber.Ctx) error {
	var presented *x509.Certificate
	if state := c.Context().TLSConnectionState(); state != nil && len(state.PeerCertificates) > 0 && len(state.VerifiedChains) > 0 {
		presented = state.PeerCertificates[0]
	} else if fwd := c.Get(ForwardedCertHeader); fwd != "" && s.fromTrustedProxy(c) {
		cert, err := auth.ParseForwardedCertificate(fwd, s.clientCAs, s.now())
		if err != nil {
			return err
		}
		presented = cert
	}
	if presented == nil {
		return nil
	}
	ctx := c.UserContext()
	fingerprint := auth.Fingerprint(presented)
	reg, org, err := s.identity.CertificateByFingerprint(ctx, fingerprint)
	if err != nil {
		return err
	}
	setCredentialCheck(c, func(ctx context.Context) error {
		_, _, err := s.identity.CertificateByFingerprint(ctx, fingerprint) // revoked or expired
		return err
	})
	p := &models.Principal{Kind: models.PrincipalCertificate, ID: reg.ID, OrganizationID: reg.OrganizationID, Environment: reg.Environment,
		Role: models.RoleCustomer, Permissions: reg.PermissionList(), Limits: models.EffectiveLimits(org, 0, 0)}
	c.SetUserContext(models.WithPrincipal(ctx, p))
	return nil
}

// ForwardedCertHeader carries the client certificate that a TLS-terminating
// proxy verified, as URL-escaped PEM (nginx: `proxy_set_header X-Client-Cert
// $ssl_client_escaped_cert;`). It is read only from TRUSTED_PROXIES, and the
// certificate is verified again against CLIENT_CA_FILE; from anyone else the
// header is ignored.
const ForwardedCertHeader = "X-Client-Cert"

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
