package models_test

import (
	"context"
	"testing"
	"time"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/identity"
	"github.com/telcoplatform/platform/models/migrate"
)

// TestCertificateRevocationAndReRegistration revokes a registration (kept,
// with revoked_at), checks that its fingerprint no longer authenticates,
// registers the same certificate again, and that revoking twice keeps the
// first revocation time.
func TestCertificateRevocationAndReRegistration(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	org, err := identity.NewStore(s).CreateOrganization(ctx, admin(t, s), identity.OrganizationInput{Name: "Cert Org", Plan: models.PlanBusiness})
	if err != nil {
		t.Fatal(err)
	}
	p := &models.Principal{Kind: models.PrincipalAPIKey, ID: "ak_x", OrganizationID: org.ID, Environment: models.EnvLive, Role: models.RoleCustomer, Permissions: []string{"*"}}
	now := time.Now().UTC()
	reg := func() *identity.ClientCertificate {
		t.Helper()
		c, err := identity.NewStore(s).RegisterCertificate(ctx, p, &identity.ClientCertificate{Name: "robot", FingerprintSHA256: "ab12", Subject: "CN=robot", Issuer: "CN=ca",
			SerialNumber: "1", NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour)}, []string{"services:read"})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	first := reg()
	if _, err := identity.NewStore(s).RegisterCertificate(ctx, p, &identity.ClientCertificate{Name: "dup", FingerprintSHA256: "ab12", Subject: "CN=robot", Issuer: "CN=ca",
		SerialNumber: "1", NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour)}, []string{"services:read"}); models.ErrorCode(err) != models.CodeAlreadyExists {
		t.Fatalf("second active registration: %v", err)
	}
	revoked, changed, err := identity.NewStore(s).RevokeCertificate(ctx, p, first.ID)
	if err != nil || !changed || revoked.RevokedAt == nil || revoked.Status(now) != identity.CertificateRevoked {
		t.Fatalf("revoke: %+v %v %v", revoked, changed, err)
	}
	if _, _, err := identity.NewStore(s).CertificateByFingerprint(ctx, "ab12"); models.ErrorCode(err) != models.CodeUnauthenticated {
		t.Fatalf("revoked fingerprint authenticates: %v", err)
	}
	again, changed, err := identity.NewStore(s).RevokeCertificate(ctx, p, first.ID)
	if err != nil || changed || !again.RevokedAt.Equal(*revoked.RevokedAt) {
		t.Fatalf("second revoke: %+v %v %v", again, changed, err)
	}
	second := reg()
	if c, _, err := identity.NewStore(s).CertificateByFingerprint(ctx, "ab12"); err != nil || c.ID != second.ID {
		t.Fatalf("re-registered certificate: %+v %v", c, err)
	}
	rows, total, err := identity.NewStore(s).ListCertificates(ctx, p, identity.CertificateFilter{Status: identity.CertificateRevoked}, models.PageRequest{Limit: 10})
	if err != nil || total != 1 || rows[0].ID != first.ID {
		t.Fatalf("revoked list: %d %v", total, err)
	}
	rows, total, err = identity.NewStore(s).ListCertificates(ctx, p, identity.CertificateFilter{Status: identity.CertificateActive}, models.PageRequest{Limit: 10})
	if err != nil || total != 1 || rows[0].ID != second.ID {
		t.Fatalf("active list: %d %v", total, err)
	}
	if _, _, err := identity.NewStore(s).ListCertificates(ctx, p, identity.CertificateFilter{Status: "lost"}, models.PageRequest{Limit: 10}); models.ErrorCode(err) != models.CodeValidation {
		t.Fatalf("unknown status: %v", err)
	}
}

// TestClientManagementMigrationUpgradesOldSchema puts the certificate and
// client tables back in their shape before migration 202611260011 (a plain
// unique fingerprint index, no revoked_at or updated_at), runs the
// migrations again and checks the upgrade: one active registration per
// fingerprint, revoked ones kept alongside, updated_at filled in.
func TestClientManagementMigrationUpgradesOldSchema(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	db := s.In(ctx, models.SystemScope())
	m := db.Migrator()
	steps := []func() error{
		func() error {
			return m.DropIndex(&identity.ClientCertificate{}, "idx_client_certificates_active_fingerprint")
		},
		func() error { return m.DropColumn(&identity.ClientCertificate{}, "revoked_at") },
		func() error { return m.DropColumn(&identity.OAuthClient{}, "updated_at") },
		func() error { return m.DropColumn(&identity.OAuthClient{}, "secret_rotated_at") },
		func() error {
			return db.Exec("CREATE UNIQUE INDEX idx_client_certificates_fingerprint_sha256 ON client_certificates (fingerprint_sha256)").Error
		},
		func() error {
			return db.Exec("DELETE FROM migrations WHERE id = ?", "202611260011_client_management").Error
		},
	}
	for i, step := range steps {
		if err := step(); err != nil {
			t.Fatalf("downgrade step %d: %v", i, err)
		}
	}
	if err := migrate.Run(ctx, s.DB); err != nil {
		t.Fatal(err)
	}
	if m.HasIndex(&identity.ClientCertificate{}, "idx_client_certificates_fingerprint_sha256") {
		t.Fatal("the old unique fingerprint index is still there")
	}
	if !m.HasIndex(&identity.ClientCertificate{}, "idx_client_certificates_active_fingerprint") ||
		!m.HasColumn(&identity.ClientCertificate{}, "revoked_at") || !m.HasColumn(&identity.OAuthClient{}, "updated_at") {
		t.Fatal("the new index or columns are missing")
	}
	org, err := identity.NewStore(s).CreateOrganization(ctx, admin(t, s), identity.OrganizationInput{Name: "Upgraded", Plan: models.PlanBusiness})
	if err != nil {
		t.Fatal(err)
	}
	p := &models.Principal{OrganizationID: org.ID, Environment: models.EnvLive, Role: models.RoleCustomer, Permissions: []string{"*"}}
	now := time.Now().UTC()
	for i := 0; i < 2; i++ {
		c, err := identity.NewStore(s).RegisterCertificate(ctx, p, &identity.ClientCertificate{Name: "robot", FingerprintSHA256: "cd34", Subject: "CN=r", Issuer: "CN=ca",
			SerialNumber: "1", NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour)}, []string{"services:read"})
		if err != nil {
			t.Fatalf("registration %d on the upgraded schema: %v", i, err)
		}
		if _, _, err := identity.NewStore(s).RevokeCertificate(ctx, p, c.ID); err != nil {
			t.Fatal(err)
		}
	}
}
