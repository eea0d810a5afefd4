package models_test

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/identity"
	"github.com/telcoplatform/platform/models/rekey"
	"github.com/telcoplatform/platform/testenv"
)

func sealer(t *testing.T, key byte, previous ...byte) *models.Sealer {
	t.Helper()
	var prev [][]byte
	for _, p := range previous {
		prev = append(prev, bytes.Repeat([]byte{p}, 32))
	}
	s, err := models.NewSealer(bytes.Repeat([]byte{key}, 32), prev...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSealedValuesNameTheirKeyAndRow: a sealed value carries its key's id
// and is bound to its row, so it does not open elsewhere, and a key can be
// rotated (previous keys still open what they sealed).
func TestSealedValuesNameTheirKeyAndRow(t *testing.T) {
	old, rotated, fresh := sealer(t, 1), sealer(t, 2, 1), sealer(t, 2)
	v := old.Seal("webhooks:wh_a", "whsec_1")
	if !strings.HasPrefix(v, "v2."+old.KeyID()+".") {
		t.Fatalf("sealed value %q does not name key %s", v, old.KeyID())
	}
	for _, tc := range []struct {
		name    string
		s       *models.Sealer
		binding string
		ok      bool
	}{
		{"its own row", old, "webhooks:wh_a", true},
		{"another row", old, "webhooks:wh_b", false},
		{"another table", old, "api_keys:wh_a", false},
		{"after a rotation, the previous key opens it", rotated, "webhooks:wh_a", true},
		{"without the previous key", fresh, "webhooks:wh_a", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.s.Open(tc.binding, v)
			if tc.ok != (err == nil) || (tc.ok && got != "whsec_1") {
				t.Fatalf("Open = %q, %v", got, err)
			}
		})
	}
	if _, err := fresh.Open("webhooks:wh_a", v); err == nil || !strings.Contains(err.Error(), "SECRETS_KEY_PREVIOUS") {
		t.Fatalf("an unknown key's error does not say what to do: %v", err)
	}
	// Values written before key ids existed: plain base64 of nonce and ciphertext, no binding.
	block, _ := aes.NewCipher(bytes.Repeat([]byte{1}, 32))
	gcm, _ := cipher.NewGCM(block)
	nonce := make([]byte, gcm.NonceSize())
	legacy := base64.StdEncoding.EncodeToString(gcm.Seal(nonce, nonce, []byte("legacy"), nil))
	if got, err := rotated.Open("anything", legacy); err != nil || got != "legacy" {
		t.Fatalf("legacy value: %q %v", got, err)
	}
}

// TestRekeySecrets re-seals every stored secret under the current key, after
// which the previous key can be dropped.
func TestRekeySecrets(t *testing.T) {
	ctx := context.Background()
	s, seeded := testenv.SeededStore(t)
	p := &models.Principal{ID: "ak_x", OrganizationID: seeded.Demo.ID, Environment: models.EnvLive, Role: models.RoleCustomer, Permissions: []string{"*"}}
	issued, err := identity.NewStore(s).CreateAPIKey(ctx, p, identity.APIKeyInput{Name: "signed", Permissions: []string{"services:read"}, RequireSigning: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := identity.NewStore(s).EnsureServerSecret(ctx, "rekey-test"); err != nil {
		t.Fatal(err)
	}
	oldKeyID := s.Sealer.KeyID()
	s.Sealer = sealer(t, 9, 7) // testenv seals with key 7
	n, err := rekey.NewStore(s).RekeySecrets(ctx)
	if err != nil || n < 2 {
		t.Fatalf("rekey: %d, %v", n, err)
	}
	if again, err := rekey.NewStore(s).RekeySecrets(ctx); err != nil || again != 0 {
		t.Fatalf("second rekey: %d, %v", again, err)
	}
	s.Sealer = sealer(t, 9) // the old key dropped
	key, err := identity.NewStore(s).GetAPIKey(ctx, p, issued.Key.ID)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(key.SigningSecret, oldKeyID) {
		t.Fatalf("signing secret still under the old key: %q", key.SigningSecret)
	}
	if got, err := s.Sealer.Open(models.BindAPIKey(key.ID), key.SigningSecret); err != nil || got != issued.SigningSecret {
		t.Fatalf("signing secret after rekey: %q %v", got, err)
	}
	if _, err := identity.NewStore(s).EnsureServerSecret(ctx, "rekey-test"); err != nil {
		t.Fatalf("server secret after rekey: %v", err)
	}
}
