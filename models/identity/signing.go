package identity

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strconv"
	"strings"
	"time"

	"github.com/telcoplatform/platform/models"
)

// Request-signing schemes of X-Signature: a bare base64 value (or "v1,"
// before it) is v1; "v2," before it is v2, which also covers the body and
// a nonce.
const (
	SignatureV1 = "v1"
	SignatureV2 = "v2"
	// SignatureWindow is how far X-Timestamp may be from the server's clock,
	// either way; a signature is refused a second time within it.
	SignatureWindow = signatureMaxSkew
	// MaxNonceLength bounds X-Nonce (v2).
	MaxNonceLength = 128
)

// SignedRequest is what a signing key's request presents and what its
// signature covers.
type SignedRequest struct {
	Timestamp string // X-Timestamp, Unix seconds
	Signature string // X-Signature: base64, "v1,<base64>" or "v2,<base64>"
	Nonce     string // X-Nonce (v2): any 1 to 128 printable characters, unique per request
	Method    string
	RawPath   string // the path as sent, query included
	Body      []byte // the raw body (v2)
}

// VerifiedSignature is an accepted signature: its scheme and raw MAC, for
// the replay check.
type VerifiedSignature struct {
	Scheme    string
	Timestamp string
	MAC       []byte
}

// VerifySignature checks a signed request of a key that requires signing
// (it returns nil, nil for a key that does not). v1: X-Signature = base64
// HMAC-SHA256(signing secret, timestamp + METHOD + path). v2: X-Signature =
// "v2," + base64 HMAC-SHA256(signing secret, SigningTextV2(...)), which
// covers the body's SHA-256 and X-Nonce too. Timestamps more than 5 minutes
// off are refused. The caller refuses a signature seen before (replays).
// Errors: INVALID_SIGNATURE, INTERNAL_ERROR.
func (s *Store) VerifySignature(key *APIKey, r SignedRequest) (*VerifiedSignature, error) {
	if key.SigningSecret == "" {
		return nil, nil
	}
	if r.Timestamp == "" || r.Signature == "" {
		return nil, models.Errorf(models.CodeInvalidSignature, "this key requires signed requests: send X-Timestamp and X-Signature")
	}
	ts, err := strconv.ParseInt(r.Timestamp, 10, 64)
	if err != nil {
		return nil, models.Errorf(models.CodeInvalidSignature, "X-Timestamp must be Unix seconds")
	}
	skew := s.Now().Sub(time.Unix(ts, 0))
	if skew > signatureMaxSkew || skew < -signatureMaxSkew {
		return nil, models.Errorf(models.CodeInvalidSignature, "X-Timestamp is more than 5 minutes away from the server's clock")
	}
	scheme, encoded := SignatureV1, r.Signature
	if v, rest, ok := strings.Cut(r.Signature, ","); ok {
		scheme, encoded = v, rest
	}
	if scheme != SignatureV1 && scheme != SignatureV2 {
		return nil, models.Errorf(models.CodeInvalidSignature, "X-Signature scheme %q is unknown: use v2,<signature> (or v1)", scheme)
	}
	if scheme == SignatureV2 && (r.Nonce == "" || len(r.Nonce) > MaxNonceLength ||
		strings.ContainsFunc(r.Nonce, func(c rune) bool { return c < 0x21 || c > 0x7e })) {
		return nil, models.Errorf(models.CodeInvalidSignature, "v2 signatures need X-Nonce: 1 to 128 printable ASCII characters, new for every request")
	}
	secret, err := s.Sealer.Open(models.BindAPIKey(key.ID), key.SigningSecret)
	if err != nil {
		return nil, models.Internal(err)
	}
	want := SignRequest(secret, r.Timestamp, r.Method, r.RawPath)
	if scheme == SignatureV2 {
		want = SignRequestV2(secret, r.Timestamp, r.Nonce, r.Method, r.RawPath, r.Body)
	}
	got, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil || !hmac.Equal(got, want) {
		return nil, models.Errorf(models.CodeInvalidSignature, "X-Signature does not match the request")
	}
	return &VerifiedSignature{Scheme: scheme, Timestamp: r.Timestamp, MAC: got}, nil
}

// SignRequest returns the v1 raw HMAC-SHA256 of timestamp + METHOD + path
// (clients send it base64-encoded). It covers neither the body nor a nonce.
func SignRequest(secret, timestamp, method, rawPath string) []byte {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(timestamp + strings.ToUpper(method) + rawPath))
	return mac.Sum(nil)
}

// SigningTextV2 is the text a v2 signature covers, lines joined by "\n":
// "v2", timestamp, nonce, METHOD, path as sent, and the lowercase hex
// SHA-256 of the raw body (of the empty string when there is none).
func SigningTextV2(timestamp, nonce, method, rawPath string, body []byte) string {
	sum := sha256.Sum256(body)
	return strings.Join([]string{SignatureV2, timestamp, nonce, strings.ToUpper(method), rawPath, hex.EncodeToString(sum[:])}, "\n")
}

// SignRequestV2 returns the raw HMAC-SHA256 of SigningTextV2 (clients send
// "v2," + its base64).
func SignRequestV2(secret, timestamp, nonce, method, rawPath string, body []byte) []byte {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(SigningTextV2(timestamp, nonce, method, rawPath, body)))
	return mac.Sum(nil)
}
