package activities_test

import (
	"context"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"

	"github.com/telcoplatform/platform/activities"
	"github.com/telcoplatform/platform/models/identity"
	"github.com/telcoplatform/platform/workflows"
)

// TestHousekeepingPurgeIsIdempotent runs the purge activity twice over a
// store holding one expired and one live row of a few kinds: the first run
// removes the expired ones, the second finds nothing, the live ones stay.
func TestHousekeepingPurgeIsIdempotent(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	now := time.Now().UTC()
	f.store.Now = func() time.Time { return now }
	expired, live := now.Add(-time.Hour), now.Add(time.Hour)
	for _, tok := range []identity.OAuthToken{
		{Kind: identity.OAuthKindAccess, Signature: "old", ExpiresAt: expired},
		{Kind: identity.OAuthKindAccess, Signature: "new", ExpiresAt: live},
		{Kind: identity.OAuthKindRefresh, Signature: "old", ExpiresAt: expired},
	} {
		tok.RequestID, tok.ClientID, tok.Active, tok.RequestedAt, tok.Data = "req", "cli_x", true, now.Add(-2*time.Hour), "{}"
		if err := identity.NewStore(f.store).SaveOAuthToken(ctx, &tok); err != nil {
			t.Fatal(err)
		}
	}
	for jti, exp := range map[string]time.Time{"jti-old": expired, "jti-new": live} {
		if err := identity.NewStore(f.store).RevokeTokenID(ctx, jti, "usr_x", exp, "test"); err != nil {
			t.Fatal(err)
		}
	}

	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	hk := activities.NewHousekeeping(f.store, nil)
	env.RegisterActivityWithOptions(hk, activity.RegisterOptions{Name: workflows.ActivityPrefix[workflows.HousekeepingActivities]()})
	purge := func() identity.PurgeCounts {
		t.Helper()
		v, err := env.ExecuteActivity(workflows.ActivityName(workflows.HousekeepingActivities.Purge), workflows.HousekeepingPurgeInput{Run: 0, Iteration: 0})
		if err != nil {
			t.Fatal(err)
		}
		var counts identity.PurgeCounts
		if err := v.Get(&counts); err != nil {
			t.Fatal(err)
		}
		return counts
	}
	if got, want := purge(), (identity.PurgeCounts{AccessTokens: 1, RefreshTokens: 1, RevokedTokens: 1}); got != want {
		t.Fatalf("first purge %+v, want %+v", got, want)
	}
	if got := purge(); got.Total() != 0 {
		t.Fatalf("second purge removed %+v", got)
	}
	if _, err := identity.NewStore(f.store).GetOAuthToken(ctx, identity.OAuthKindAccess, "new"); err != nil {
		t.Fatalf("a live access token was purged: %v", err)
	}
	if revoked, err := identity.NewStore(f.store).TokenRevoked(ctx, "jti-new"); err != nil || !revoked {
		t.Fatalf("a live deny-list entry was purged: %v %v", revoked, err)
	}
}
