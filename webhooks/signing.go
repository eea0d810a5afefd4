package webhooks

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"strings"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/telcoplatform/platform/models"
)

// Standard Webhooks header names, as sent on every delivery.
const (
	HeaderID        = standardwebhooks.HeaderWebhookID        // "webhook-id"
	HeaderTimestamp = standardwebhooks.HeaderWebhookTimestamp // "webhook-timestamp"
	HeaderSignature = standardwebhooks.HeaderWebhookSignature // "webhook-signature"
)

// SecretPrefix starts every signing secret.
const SecretPrefix = "whsec_"

// Secret sizes in bytes (after base64 decoding). The Standard Webhooks
// specification asks for at least 24 bytes (192 bits) and at most 512 bits.
const (
	MinSecretBytes = 24
	MaxSecretBytes = 64
	newSecretBytes = 32
)

// RotationOverlap is how long the previous secret keeps signing after a
// rotation, so receivers can switch secrets without losing deliveries.
const RotationOverlap = 24 * time.Hour

// maxMessageIDLength bounds webhook-id.
const maxMessageIDLength = 128

// NewSecret returns a fresh signing secret: "whsec_" followed by the
// standard (padded) base64 of 32 random bytes from crypto/rand.
func NewSecret() string {
	b := make([]byte, newSecretBytes)
	_, _ = rand.Read(b) // crypto/rand.Read never returns an error (Go 1.24+)
	return SecretPrefix + base64.StdEncoding.EncodeToString(b)
}

// ValidateSecret returns nil when s is "whsec_" followed by the canonical
// standard (padded, RFC 4648 §4) base64 encoding of 24 to 64 bytes, and a
// VALIDATION_ERROR (*models.Error) on field "secret" otherwise. The secret
// itself never appears in the error.
func ValidateSecret(s string) error {
	if _, issue := decodeSecret(s); issue != "" {
		return models.Invalid(models.FieldIssue{Field: "secret", Issue: issue})
	}
	return nil
}

// decodeSecret returns the key bytes of s, or an issue describing why s is
// not a valid secret.
func decodeSecret(s string) ([]byte, string) {
	enc, ok := strings.CutPrefix(s, SecretPrefix)
	if !ok {
		return nil, "must start with " + SecretPrefix
	}
	key, err := base64.StdEncoding.DecodeString(enc)
	// DecodeString skips \r and \n and accepts non-zero padding bits;
	// comparing with the re-encoding accepts the canonical form only.
	if err != nil || base64.StdEncoding.EncodeToString(key) != enc {
		return nil, "must be " + SecretPrefix + " followed by standard base64 (with = padding)"
	}
	if len(key) < MinSecretBytes || len(key) > MaxSecretBytes {
		return nil, fmt.Sprintf("must encode between %d and %d bytes (got %d)", MinSecretBytes, MaxSecretBytes, len(key))
	}
	return key, ""
}

// ActiveSecrets returns the secrets that sign a delivery at now: current,
// then previous while now is before rotatedAt + RotationOverlap. previous
// "" (no rotation yet) is left out.
func ActiveSecrets(current, previous string, rotatedAt, now time.Time) []string {
	out := []string{current}
	if previous != "" && previous != current && now.Before(rotatedAt.Add(RotationOverlap)) {
		out = append(out, previous)
	}
	return out
}

// Sign returns the value of the webhook-signature header for one attempt:
// "v1,<base64 HMAC-SHA256(key, id + "." + unix seconds of ts + "." + body)>"
// for each secret, in order, separated by single spaces (several secrets
// while a rotation overlaps). Duplicate secrets sign once. The HMAC is
// computed by the official Standard Webhooks Go library.
//
// id must be 1 to 128 characters of letters, digits, '_' and '-' (the
// specification forbids '.', which would make the signed content
// ambiguous). Errors are VALIDATION_ERROR (*models.Error): field "secrets"
// when there is no secret, "secrets[i]" for a malformed one (see
// ValidateSecret), "id" and "timestamp" (zero time).
func Sign(secrets []string, id string, ts time.Time, body []byte) (signatureHeader string, err error) {
	if len(secrets) == 0 {
		return "", models.Invalid(models.FieldIssue{Field: "secrets", Issue: "at least one signing secret is required"})
	}
	if issue := checkMessageID(id); issue != "" {
		return "", models.Invalid(models.FieldIssue{Field: "id", Issue: issue})
	}
	if ts.IsZero() {
		return "", models.Invalid(models.FieldIssue{Field: "timestamp", Issue: "is required"})
	}
	sigs := make([]string, 0, len(secrets))
	for i, s := range secrets {
		key, issue := decodeSecret(s)
		if issue != "" {
			return "", models.Invalid(models.FieldIssue{Field: fmt.Sprintf("secrets[%d]", i), Issue: issue})
		}
		if dup(secrets[:i], s) {
			continue
		}
		wh, err := standardwebhooks.NewWebhookRaw(key)
		if err != nil {
			return "", models.Internal(err)
		}
		sig, err := wh.Sign(id, ts, body)
		if err != nil {
			return "", models.Internal(err)
		}
		sigs = append(sigs, sig)
	}
	return strings.Join(sigs, " "), nil
}

// dup reports whether s occurs in earlier.
func dup(earlier []string, s string) bool {
	for _, e := range earlier {
		if e == s {
			return true
		}
	}
	return false
}

// checkMessageID returns why id cannot be a webhook-id, or "".
func checkMessageID(id string) string {
	if id == "" {
		return "is required"
	}
	if len(id) > maxMessageIDLength {
		return fmt.Sprintf("must be at most %d characters", maxMessageIDLength)
	}
	for _, r := range id {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
		default:
			return "may only contain letters, digits, '_' and '-'"
		}
	}
	return ""
}
