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
