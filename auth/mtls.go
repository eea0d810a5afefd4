package auth

import (
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/telcoplatform/platform/models"
)

// LoadCAPool reads a PEM bundle of client CAs. Errors: a plain error naming the file.
func LoadCAPool(file string) (*x509.CertPool, error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("CLIENT_CA_FILE: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(raw) {
		return nil, fmt.Errorf("CLIENT_CA_FILE: %s holds no PEM certificate", file)
	}
	return pool, nil
}

// MTLSConfig returns the TLS configuration of the mutual-TLS listener: the
// server certificate, and client certificates verified against the CA pool
// when given (tls.VerifyClientCertIfGiven: a request may still carry another
// credential). Errors: a plain error naming the file.
func MTLSConfig(certFile, keyFile, caFile string) (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("TLS_CERT_FILE/TLS_KEY_FILE: %w", err)
	}
	pool, err := LoadCAPool(caFile)
	if err != nil {
		return nil, err
	}
	return &tls.Config{
		Certificates: []tls.Certificate{cert},
		ClientAuth:   tls.VerifyClientCertIfGiven,
		ClientCAs:    pool,
		MinVersion:   tls.VersionTLS12,
	}, nil
}

// Fingerprint returns the hex SHA-256 of a certificate's DER encoding.
func Fingerprint(cert *x509.Certificate) string {
	sum := sha256.Sum256(cert.Raw)
	return hex.EncodeToString(sum[:])
}

// ParseClientCertificate parses one PEM certificate for registration and
// checks that it is a client certificate valid now that chains to the
// pool. Errors: VALIDATION_ERROR (field certificate).
func ParseClientCertificate(pemText string, pool *x509.CertPool, now time.Time) (*x509.Certificate, error) {
	bad := func(issue string) error {
		return models.Invalid(models.FieldIssue{Field: "certificate", Issue: issue})
	}
	block, rest := pem.Decode([]byte(pemText))
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, bad("must be one PEM CERTIFICATE block")
	}
	if p, _ := pem.Decode(rest); p != nil {
		return nil, bad("must hold exactly one certificate (not a chain)")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, bad("is not a valid X.509 certificate")
	}
	if now.Before(cert.NotBefore) || now.After(cert.NotAfter) {
		return nil, bad("is expired or not yet valid")
	}
	if pool == nil {
		return nil, models.Errorf(models.CodeDependencyUnavailable, "mutual TLS is not configured on this server (CLIENT_CA_FILE)")
	}
	if _, err := cert.Verify(x509.VerifyOptions{Roots: pool, CurrentTime: now, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		return nil, bad("does not chain to the platform's client CA (or is not for client authentication)")
	}
	return cert, nil
}

// ParseForwardedCertificate parses the client certificate a TLS-terminating
// proxy forwarded (URL-escaped PEM) and checks it like a registration: a
// client certificate valid now that chains to the pool.
// Errors: UNAUTHENTICATED (unreadable, expired, foreign or mutual TLS off).
func ParseForwardedCertificate(header string, pool *x509.CertPool, now time.Time) (*x509.Certificate, error) {
	pemText, err := url.QueryUnescape(header)
	if err != nil || len(pemText) > 20000 {
		return nil, models.Errorf(models.CodeUnauthenticated, "the forwarded client certificate is not URL-escaped PEM")
	}
	cert, err := ParseClientCertificate(pemText, pool, now)
	if err != nil {
		return nil, models.Errorf(models.CodeUnauthenticated, "the forwarded client certificate is not acceptable: %s", strings.TrimPrefix(models.AsError(err).Message, "certificate: "))
	}
	return cert, nil
}
