package models

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// Sealer encrypts secrets at rest (signing secrets, webhook secrets, keys,
// MFA secrets, stored answers) with AES-256-GCM under SECRETS_KEY.
//
// A sealed value names the key that sealed it and is bound to where it is
// stored: "v2.<key id>.<base64 of nonce and ciphertext>", with the binding
// (for example "webhooks:wh_..."), as AEAD associated data, so a value
// copied into another row or column does not open. Keys rotate: values
// sealed under a previous key (SECRETS_KEY_PREVIOUS) still open, new ones
// are sealed under the current key, and `platform rekey` re-seals the rest.
// Values written before key ids existed (plain base64, no binding) open
// with any configured key.
type Sealer struct {
	current sealKey
	keys    map[string]sealKey // by id: the current key and the previous ones
}

type sealKey struct {
	id   string
	aead cipher.AEAD
}

// sealedPrefix starts every value sealed with a key id and a binding.
const sealedPrefix = "v2."

// NewSealer returns a Sealer that seals under key (32 bytes) and also opens
// values sealed under the previous keys.
func NewSealer(key []byte, previous ...[]byte) (*Sealer, error) {
	cur, err := newSealKey(key)
	if err != nil {
		return nil, err
	}
	s := &Sealer{current: cur, keys: map[string]sealKey{cur.id: cur}}
	for i, p := range previous {
		k, err := newSealKey(p)
		if err != nil {
			return nil, fmt.Errorf("previous secrets key %d: %w", i+1, err)
		}
		if _, dup := s.keys[k.id]; !dup {
			s.keys[k.id] = k
		}
	}
	return s, nil
}

func newSealKey(key []byte) (sealKey, error) {
	if len(key) != 32 {
		return sealKey{}, fmt.Errorf("secrets key must be 32 bytes, got %d", len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return sealKey{}, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return sealKey{}, err
	}
	sum := sha256.Sum256(append([]byte("platform secrets key id:"), key...))
	return sealKey{id: hex.EncodeToString(sum[:4]), aead: aead}, nil
}

// KeyID returns the id of the key new values are sealed under.
func (s *Sealer) KeyID() string { return s.current.id }

// Seal seals plaintext bound to binding (where it is stored: table and row).
func (s *Sealer) Seal(binding, plaintext string) string {
	a := s.current.aead
	nonce := make([]byte, a.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		panic("crypto/rand failed: " + err.Error())
	}
	ct := a.Seal(nonce, nonce, []byte(plaintext), []byte(binding))
	return sealedPrefix + s.current.id + "." + base64.StdEncoding.EncodeToString(ct)
}

// Open decrypts a value sealed for binding. Errors: a malformed value, an
// unknown key id, or a value sealed for another binding or key.
func (s *Sealer) Open(binding, sealed string) (string, error) {
	if rest, ok := strings.CutPrefix(sealed, sealedPrefix); ok {
		id, b64, ok := strings.Cut(rest, ".")
		k, known := s.keys[id]
		if !ok || !known {
			return "", errors.New("sealed value is under an unknown secrets key (set SECRETS_KEY_PREVIOUS to the key it was sealed with)")
		}
		return openWith(k.aead, b64, []byte(binding))
	}
	// Written before key ids and bindings: try every key.
	for _, k := range s.keys {
		if plain, err := openWith(k.aead, sealed, nil); err == nil {
			return plain, nil
		}
	}
	return "", errors.New("sealed value cannot be opened with the configured secrets keys")
}

// Current reports whether a sealed value is already under the current key
// with a binding (so `platform rekey` can leave it alone).
func (s *Sealer) Current(sealed string) bool {
	return strings.HasPrefix(sealed, sealedPrefix+s.current.id+".")
}

func openWith(a cipher.AEAD, b64 string, binding []byte) (string, error) {
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil || len(raw) < a.NonceSize() {
		return "", errors.New("sealed value is malformed")
	}
	n := a.NonceSize()
	plain, err := a.Open(nil, raw[:n], raw[n:], binding)
	if err != nil {
		return "", errors.New("sealed value cannot be opened with this key and binding")
	}
	return string(plain), nil
}

// HashSecret returns the hex SHA-256 of a high-entropy secret (API keys),
// the only form in which such secrets are stored.
func HashSecret(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// Bindings: where a sealed value is stored, its associated data.

// BindAPIKey binds an API key's signing secret to the key.
func BindAPIKey(id string) string { return "api_keys:" + id }

// BindSigningKey binds a token signing key's private key to its kid.
func BindSigningKey(kid string) string { return "signing_keys:" + kid }

// The bindings of the other sealed columns: the table and the row a
// sealed value belongs to (see Sealer.Seal).
func BindWebhook(id string) string           { return "webhooks:" + id }
func BindMFA(userID string) string           { return "mfa_enrollments:" + userID }
func BindNotification(id string) string      { return "notifications:" + id }
func BindServerSecret(name string) string    { return "server_secrets:" + name }
func BindIdempotency(scopeKey string) string { return "idempotency:" + scopeKey }
