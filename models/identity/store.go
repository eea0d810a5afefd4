package identity

import "github.com/telcoplatform/platform/models"

// Store is the identity domain's store: the core store (database, clock, sealer,
// tenancy scopes) with organizations, users, API keys, OAuth clients and tokens, MFA, SAML, client certificates, access restrictions and the audit log as methods.
type Store struct {
	*models.Store
}

// NewStore returns the identity store on core.
func NewStore(core *models.Store) *Store { return &Store{Store: core} }
