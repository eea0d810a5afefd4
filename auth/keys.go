// Package auth holds the platform's identity machinery that is not HTTP:
// access-token signing keys and their JWKS, issuing and verifying RS256
// access tokens (JWTs), and the deny-list of revoked tokens.
package auth

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"math/big"
	"sync"
	"time"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/identity"
)

// RSAKeyBits is the size of generated signing keys.
const RSAKeyBits = 2048

// KeyPrefix starts every signing key id (the JWT header's kid).
const KeyPrefix = "rsa"

// UnknownKeyReloadInterval is how often, at most, tokens naming a kid the
// ring does not know make it reload the keys from the database: a flood of
// forged kids costs one query per interval, not one per request.
const UnknownKeyReloadInterval = 30 * time.Second

// KeyRefreshInterval is how long a ring trusts the keys it loaded: after
// it, the next token it signs or verifies reloads them from the database,
// so a key rotated or retired on one instance (`platform signing-keys`)
// signs, or stops verifying, on every instance within this interval.
const KeyRefreshInterval = time.Minute

// KeyRing hands out the current signing key and the public keys by kid. Keys
// live in the database (private parts sealed); the ring caches them and
// reloads when it meets a kid it does not know (another instance rotated),
// at most once per UnknownKeyReloadInterval.
type KeyRing struct {
	store    *models.Store
	identity *identity.Store
	now      func() time.Time

	mu     sync.Mutex
	signer *signingKey
	public map[string]*rsa.PublicKey
	// unknownReload is when an unknown kid last reloaded the keys.
	unknownReload time.Time
	// loadedAt is when the keys were last loaded (or one was created).
	loadedAt time.Time
}

type signingKey struct {
	kid string
	key *rsa.PrivateKey
}

// NewKeyRing returns a key ring on store; now is the clock (nil: the system
// clock). No key is created until one is needed.
func NewKeyRing(store *models.Store, now func() time.Time) *KeyRing {
	if now == nil {
		now = func() time.Time { return time.Now().UTC() }
	}
	return &KeyRing{store: store, identity: identity.NewStore(store), now: now, public: map[string]*rsa.PublicKey{}}
}

// signingKey returns the newest active key, creating the first one if the
// database holds none. Errors: INTERNAL_ERROR.
func (r *KeyRing) signingKey(ctx context.Context) (*signingKey, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.signer != nil && !r.staleLocked() {
		return r.signer, nil
	}
	if err := r.loadLocked(ctx); err != nil {
		if r.signer != nil {
			return r.signer, nil // the database is unavailable: keep signing with the key loaded
		}
		return nil, err
	}
	if r.signer != nil {
		return r.signer, nil
	}
	if _, err := r.createLocked(ctx); err != nil {
		return nil, err
	}
	return r.signer, nil
}

// Rotate creates a new signing key that signs every token from now on; the
// previous keys stay published (tokens they signed keep verifying until
// their expiry or until RetireKey). It returns the new kid. Errors: INTERNAL_ERROR.
func (r *KeyRing) Rotate(ctx context.Context) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.createLocked(ctx)
}

// RetireKey stops publishing and accepting a key. Errors: NOT_FOUND, INTERNAL_ERROR.
func (r *KeyRing) RetireKey(ctx context.Context, kid string) error {
	if err := r.identity.RetireSigningKey(ctx, kid); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.loadLocked(ctx)
}

// PublicKey returns the published key with the kid, reloading from the
// database when it is unknown, unless an unknown kid already did in the last
// UnknownKeyReloadInterval. Errors: INVALID_TOKEN (unknown kid), INTERNAL_ERROR.
func (r *KeyRing) PublicKey(ctx context.Context, kid string) (*rsa.PublicKey, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.staleLocked() {
		// Keys rotated or retired elsewhere take effect here now; while the
		// database is unavailable the keys loaded stay in use.
		_ = r.loadLocked(ctx)
	}
	if k, ok := r.public[kid]; ok {
		return k, nil
	}
	now := r.now()
	if !r.unknownReload.IsZero() && now.Sub(r.unknownReload) < UnknownKeyReloadInterval {
		return nil, models.Errorf(models.CodeInvalidToken, "the access token was signed by an unknown key")
	}
	r.unknownReload = now
	if err := r.loadLocked(ctx); err != nil {
		return nil, err
	}
	if k, ok := r.public[kid]; ok {
		return k, nil
	}
	return nil, models.Errorf(models.CodeInvalidToken, "the access token was signed by an unknown key")
}

// JWK is one public key of the JWKS (RFC 7517, RSA members of RFC 7518).
type JWK struct {
	Kty string `json:"kty" example:"RSA"`
	Use string `json:"use" example:"sig"`
	Alg string `json:"alg" example:"RS256"`
	Kid string `json:"kid" example:"rsa_3fK9aZ"`
	N   string `json:"n" doc:"modulus, base64url without padding"`
	E   string `json:"e" example:"AQAB" doc:"public exponent, base64url without padding"`
}

// JWKS returns the public parts of every active signing key (creating the
// first key if there is none). Errors: INTERNAL_ERROR.
func (r *KeyRing) JWKS(ctx context.Context) ([]JWK, error) {
	if _, err := r.signingKey(ctx); err != nil {
		return nil, err
	}
	rows, err := r.identity.ActiveSigningKeys(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]JWK, 0, len(rows))
	for _, row := range rows {
		pub, err := parsePublic(row.PublicPEM)
		if err != nil {
			return nil, models.Internal(err)
		}
		out = append(out, JWK{
			Kty: "RSA", Use: "sig", Alg: "RS256", Kid: row.ID,
			N: base64.RawURLEncoding.EncodeToString(pub.N.Bytes()),
			E: base64.RawURLEncoding.EncodeToString(big.NewInt(int64(pub.E)).Bytes()),
		})
	}
	return out, nil
}

// staleLocked reports whether the keys were loaded more than
// KeyRefreshInterval ago (or never).
func (r *KeyRing) staleLocked() bool {
	return r.loadedAt.IsZero() || r.now().Sub(r.loadedAt) >= KeyRefreshInterval
}

// loadLocked reads the active keys and, when all of them could be read,
// replaces the ring's: a failure leaves the keys loaded before in use.
// Either way the ring waits KeyRefreshInterval before its next periodic
// reload, so an unavailable database costs one query per interval.
func (r *KeyRing) loadLocked(ctx context.Context) error {
	r.loadedAt = r.now()
	rows, err := r.identity.ActiveSigningKeys(ctx)
	if err != nil {
		return err
	}
	public := make(map[string]*rsa.PublicKey, len(rows))
	for _, row := range rows {
		pub, err := parsePublic(row.PublicPEM)
		if err != nil {
			return models.Internal(err)
		}
		public[row.ID] = pub
	}
	var signer *signingKey
	if len(rows) > 0 { // newest first
		priv, err := r.openPrivate(rows[0].ID, rows[0].PrivateSealed)
		if err != nil {
			return err
		}
		signer = &signingKey{kid: rows[0].ID, key: priv}
	}
	r.public, r.signer = public, signer
	return nil
}

func (r *KeyRing) createLocked(ctx context.Context) (string, error) {
	if r.store.Sealer == nil {
		return "", models.Internal(errors.New("signing keys need SECRETS_KEY (no sealer configured)"))
	}
	priv, err := rsa.GenerateKey(rand.Reader, RSAKeyBits)
	if err != nil {
		return "", models.Internal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return "", models.Internal(err)
	}
	pubDER, err := x509.MarshalPKIXPublicKey(&priv.PublicKey)
	if err != nil {
		return "", models.Internal(err)
	}
	kid := models.NewID(KeyPrefix)
	row := &identity.SigningKey{
		ID:            kid,
		Algorithm:     "RS256",
		PrivateSealed: r.store.Sealer.Seal(models.BindSigningKey(kid), string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))),
		PublicPEM:     string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER})),
		CreatedAt:     r.store.Now(),
	}
	if err := r.identity.SaveSigningKey(ctx, row); err != nil {
		return "", err
	}
	r.public[row.ID] = &priv.PublicKey
	r.signer = &signingKey{kid: row.ID, key: priv}
	return row.ID, nil
}

func (r *KeyRing) openPrivate(kid, sealed string) (*rsa.PrivateKey, error) {
	if r.store.Sealer == nil {
		return nil, models.Internal(errors.New("signing keys need SECRETS_KEY (no sealer configured)"))
	}
	plain, err := r.store.Sealer.Open(models.BindSigningKey(kid), sealed)
	if err != nil {
		return nil, models.Internal(err)
	}
	block, _ := pem.Decode([]byte(plain))
	if block == nil {
		return nil, models.Internal(errors.New("sealed signing key is not PEM"))
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, models.Internal(err)
	}
	priv, ok := k.(*rsa.PrivateKey)
	if !ok {
		return nil, models.Internal(errors.New("signing key is not RSA"))
	}
	return priv, nil
}

func parsePublic(p string) (*rsa.PublicKey, error) {
	block, _ := pem.Decode([]byte(p))
	if block == nil {
		return nil, errors.New("public signing key is not PEM")
	}
	k, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		return nil, err
	}
	pub, ok := k.(*rsa.PublicKey)
	if !ok {
		return nil, errors.New("public signing key is not RSA")
	}
	return pub, nil
}
