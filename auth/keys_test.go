package auth_test

import (
	"context"
	"encoding/base64"
	"sync/atomic"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/telcoplatform/platform/auth"
	"github.com/telcoplatform/platform/models"
)

// TestUnknownKidReloadsAtMostOncePerInterval sends tokens naming kids no
// one knows: the signing keys are read from the database once per
// interval, however many such tokens arrive.
func TestUnknownKidReloadsAtMostOncePerInterval(t *testing.T) {
	store := newStore(t, true)
	clock := time.Now().UTC()
	tokens := auth.NewTokens(store, "https://api.example.com", func() time.Time { return clock })
	if _, err := tokens.Keys().JWKS(context.Background()); err != nil { // the first key, loaded
		t.Fatal(err)
	}
	var loads atomic.Int64
	err := store.DB.Callback().Query().After("gorm:query").Register("test:count_signing_key_loads", func(db *gorm.DB) {
		if db.Statement.Table == "signing_keys" {
			loads.Add(1)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	forged := func(kid string) string {
		enc := base64.RawURLEncoding.EncodeToString
		return enc([]byte(`{"alg":"RS256","typ":"JWT","kid":"`+kid+`"}`)) + "." + enc([]byte(`{"sub":"usr_x"}`)) + "." + enc([]byte("sig"))
	}
	for i := range 20 {
		if _, err := tokens.Verify(context.Background(), forged("rsa_forged"+models.RandomString(6))); models.ErrorCode(err) != models.CodeInvalidToken {
			t.Fatalf("forged kid %d: %v", i, err)
		}
	}
	if n := loads.Load(); n != 1 {
		t.Fatalf("20 unknown kids read the keys %d times, want once", n)
	}
	clock = clock.Add(auth.UnknownKeyReloadInterval + time.Second)
	if _, err := tokens.Verify(context.Background(), forged("rsa_later")); models.ErrorCode(err) != models.CodeInvalidToken {
		t.Fatal(err)
	}
	if n := loads.Load(); n != 2 {
		t.Fatalf("after the interval the keys were read %d times in all, want 2", n)
	}
}

// TestRotationReachesEveryInstance: two instances (two key rings on one
// database). A rotation on one makes the other sign with the new key
// within KeyRefreshInterval, while tokens of the old key keep verifying
// on both; retiring the old key makes the other refuse its tokens within
// the interval too.
func TestRotationReachesEveryInstance(t *testing.T) {
	store := newStore(t, true)
	ctx := context.Background()
	clock := time.Now().UTC()
	now := func() time.Time { return clock }
	a := auth.NewTokens(store, "https://api.example.com", now)
	b := auth.NewTokens(store, "https://api.example.com", now)
	org := newOrg(t, store, models.PlanBusiness)
	grant := auth.Grant{Subject: models.NewID(models.PrefixClient), OrganizationID: org.ID, TTL: time.Hour}
	issue := func(tk *auth.Tokens) *auth.Issued {
		t.Helper()
		is, err := tk.Issue(ctx, grant)
		if err != nil {
			t.Fatal(err)
		}
		return is
	}
	old := issue(b) // b loads (creates) the first key
	kid, err := a.Keys().Rotate(ctx)
	if err != nil || kid == old.KeyID {
		t.Fatalf("rotate: %q %v", kid, err)
	}
	if is := issue(b); is.KeyID != old.KeyID {
		t.Fatalf("b switched keys before its refresh: %s", is.KeyID)
	}
	clock = clock.Add(auth.KeyRefreshInterval)
	if is := issue(b); is.KeyID != kid {
		t.Fatalf("b signs with %s after the refresh, want the rotated %s", is.KeyID, kid)
	}
	for name, tk := range map[string]*auth.Tokens{"a": a, "b": b} {
		if _, err := tk.Verify(ctx, old.Token); err != nil {
			t.Fatalf("%s refuses a token of the previous key: %v", name, err)
		}
	}
	if err := a.Keys().RetireKey(ctx, old.KeyID); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Verify(ctx, old.Token); models.ErrorCode(err) != models.CodeInvalidToken {
		t.Fatalf("a accepts a token of the key it retired: %v", err)
	}
	if _, err := b.Verify(ctx, old.Token); err != nil {
		t.Fatalf("b refused the old key before its refresh: %v", err)
	}
	clock = clock.Add(auth.KeyRefreshInterval)
	if _, err := b.Verify(ctx, old.Token); models.ErrorCode(err) != models.CodeInvalidToken {
		t.Fatalf("b accepts a token of the retired key after its refresh: %v", err)
	}
}
