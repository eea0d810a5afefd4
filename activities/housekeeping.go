package activities

import (
	"context"
	"log/slog"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/identity"
	"github.com/telcoplatform/platform/workflows"
)

// Housekeeping holds the dependencies of the housekeeping activity,
// registered by worker.RegisterActivities as "Housekeeping.Purge"
// (workflows.HousekeepingActivities).
type Housekeeping struct {
	store    *models.Store
	identity *identity.Store
	log      *slog.Logger
}

// NewHousekeeping returns the housekeeping activity over store.
func NewHousekeeping(store *models.Store, log *slog.Logger) *Housekeeping {
	if log == nil {
		log = slog.Default()
	}
	return &Housekeeping{store: store, identity: identity.NewStore(store), log: log}
}

// Purge deletes the expired authentication artefacts (models.Store.PurgeExpired
// at the store's current time) and returns how many of each kind it removed.
// It is idempotent: a retry, or two workers purging at once, only finds
// less to delete. Errors: INTERNAL_ERROR (retried by Temporal).
func (a *Housekeeping) Purge(ctx context.Context, in workflows.HousekeepingPurgeInput) (identity.PurgeCounts, error) {
	counts, err := a.identity.PurgeExpired(ctx, a.store.Now())
	if err != nil {
		return counts, activityError(err)
	}
	if counts.Total() > 0 {
		a.log.InfoContext(ctx, "purged expired authentication artefacts", "run", in.Run, "iteration", in.Iteration,
			"authorization_codes", counts.AuthorizationCodes, "pkce_requests", counts.PKCERequests, "access_tokens", counts.AccessTokens,
			"refresh_tokens", counts.RefreshTokens, "device_grants", counts.DeviceGrants, "revoked_tokens", counts.RevokedTokens,
			"saml_requests", counts.SAMLRequests, "mfa_challenges", counts.MFAChallenges)
	}
	return counts, nil
}
