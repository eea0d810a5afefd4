package models_test

import (
	"context"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/identity"
)

func TestPasswordLockoutDurations(t *testing.T) {
	for failures, want := range map[int]time.Duration{0: 0, 4: 0, 5: time.Minute, 6: 2 * time.Minute, 7: 4 * time.Minute, 11: time.Hour, 50: time.Hour} {
		if got := identity.PasswordLockout(failures); got != want {
			t.Errorf("PasswordLockout(%d) = %s, want %s", failures, got, want)
		}
	}
}

// TestPasswordLockout locks an account after repeated wrong passwords: even
// the right password is refused (with a retry hint) until the lockout
// passes; a success resets the count; further failures double the lockout.
func TestPasswordLockout(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	clock := time.Now().UTC()
	s.Now = func() time.Time { return clock }
	u, err := identity.NewStore(s).CreateUser(ctx, admin(t, s), identity.UserInput{Email: "lock@example.com", Name: "Lock", Password: "correct horse battery"})
	if err != nil {
		t.Fatal(err)
	}
	const right, wrong = "correct horse battery", "wrong horse battery"
	fail := func(password string) int {
		t.Helper()
		_, err := identity.NewStore(s).CheckPassword(ctx, u.Email, password)
		if models.ErrorCode(err) != models.CodeUnauthenticated || models.AsError(err).Message != "e-mail or password is wrong" {
			t.Fatalf("CheckPassword = %v, want the generic UNAUTHENTICATED", err)
		}
		return identity.RetryAfter(err)
	}
	for i := 1; i < identity.PasswordMaxFailures; i++ {
		if n := fail(wrong); n != 0 {
			t.Fatalf("failure %d already locks (%d s)", i, n)
		}
	}
	if n := fail(wrong); n != 60 {
		t.Fatalf("failure %d: retry after %d s, want 60", identity.PasswordMaxFailures, n)
	}
	clock = clock.Add(30 * time.Second)
	if n := fail(right); n != 30 {
		t.Fatalf("the right password during the lockout: retry after %d s, want 30", n)
	}
	clock = clock.Add(31 * time.Second)
	if _, err := identity.NewStore(s).CheckPassword(ctx, u.Email, right); err != nil {
		t.Fatalf("the right password after the lockout: %v", err)
	}
	// The success reset the count: four more failures do not lock.
	for range identity.PasswordMaxFailures - 1 {
		if n := fail(wrong); n != 0 {
			t.Fatalf("locked after a reset: %d s", n)
		}
	}
	if n := fail(wrong); n != 60 {
		t.Fatalf("lockout after a reset: %d s, want 60", n)
	}
	clock = clock.Add(61 * time.Second)
	if n := fail(wrong); n != 120 {
		t.Fatalf("the next failure after a lockout: %d s, want 120 (doubled)", n)
	}
}

// TestUnknownEmailComparesAHash checks that a sign-in with an unknown
// e-mail, or of an account without a password, still compares the password
// with a hash of the stored passwords' cost, and answers like a wrong password.
func TestUnknownEmailComparesAHash(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	var hashes [][]byte
	s.ComparePassword = func(hash, password []byte) error {
		hashes = append(hashes, hash)
		return bcrypt.CompareHashAndPassword(hash, password)
	}
	noPassword, err := identity.NewStore(s).CreateUser(ctx, admin(t, s), identity.UserInput{Email: "sso-only@example.com", Name: "SSO"})
	if err != nil {
		t.Fatal(err)
	}
	for _, email := range []string{"nobody@nowhere.example", noPassword.Email} {
		hashes = nil
		_, err := identity.NewStore(s).CheckPassword(ctx, email, "some password")
		if models.ErrorCode(err) != models.CodeUnauthenticated || models.AsError(err).Message != "e-mail or password is wrong" || identity.RetryAfter(err) != 0 {
			t.Fatalf("%s: %v", email, err)
		}
		if len(hashes) != 1 {
			t.Fatalf("%s: %d hash comparisons, want 1", email, len(hashes))
		}
		if cost, err := bcrypt.Cost(hashes[0]); err != nil || cost != bcrypt.DefaultCost {
			t.Fatalf("%s: compared with a hash of cost %d (%v), want %d", email, cost, err, bcrypt.DefaultCost)
		}
	}
}
