package webhooks

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// secretOf returns a whsec_ secret encoding n bytes of fill.
func secretOf(n int, fill byte) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = fill + byte(i)
	}
	return SecretPrefix + base64.StdEncoding.EncodeToString(b)
}

func TestNewSecret(t *testing.T) {
	a, b := NewSecret(), NewSecret()
	if a == b {
		t.Fatal("two secrets are equal")
	}
	for _, s := range []string{a, b} {
		if !strings.HasPrefix(s, SecretPrefix) {
			t.Fatalf("secret %q lacks the prefix", s)
		}
		raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(s, SecretPrefix))
		if err != nil || len(raw) != 32 {
			t.Fatalf("secret decodes to %d bytes, err %v; want 32", len(raw), err)
		}
		if err := ValidateSecret(s); err != nil {
			t.Fatalf("ValidateSecret(NewSecret()) = %v", err)
		}
	}
}

func TestValidateSecret(t *testing.T) {
	valid24 := secretOf(24, 1)
	tests := []struct {
		name   string
		secret string
		ok     bool
	}{
		{"spec example, 24 bytes", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", true},
		{"24 bytes", valid24, true},
		{"32 bytes padded", secretOf(32, 7), true},
		{"64 bytes", secretOf(64, 9), true},
		{"23 bytes", secretOf(23, 1), false},
		{"65 bytes", secretOf(65, 1), false},
		{"empty", "", false},
		{"prefix only", SecretPrefix, false},
		{"no prefix", strings.TrimPrefix(valid24, SecretPrefix), false},
		{"wrong prefix", "whsk_" + strings.TrimPrefix(valid24, SecretPrefix), false},
		{"upper-case prefix", "WHSEC_" + strings.TrimPrefix(valid24, SecretPrefix), false},
		{"32 bytes without padding", strings.TrimRight(secretOf(32, 7), "="), false},
		{"url-safe alphabet", SecretPrefix + base64.URLEncoding.EncodeToString([]byte(strings.Repeat("\xfb\xff", 16))), false},
		{"embedded newline", valid24[:20] + "\n" + valid24[20:], false},
		{"trailing space", valid24 + " ", false},
		{"non-canonical padding bits", SecretPrefix + strings.Repeat("A", 42) + "B=", false},
		{"not base64", SecretPrefix + strings.Repeat("!", 32), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidateSecret(tt.secret)
			if tt.ok {
				if err != nil {
					t.Fatalf("ValidateSecret = %v, want nil", err)
				}
				return
			}
			if got := fieldsOf(t, err); !slices.Equal(got, []string{"secret"}) {
				t.Fatalf("fields = %v, want [secret]", got)
			}
			if tt.secret != "" && tt.secret != SecretPrefix && strings.Contains(err.Error(), tt.secret) {
				t.Fatal("the error repeats the secret")
			}
		})
	}
}

// officialHeaders builds the headers a receiver sees.
func officialHeaders(id string, ts time.Time, sig string) http.Header {
	h := http.Header{}
	h.Set(standardwebhooks.HeaderWebhookID, id)
	h.Set(standardwebhooks.HeaderWebhookTimestamp, strconv.FormatInt(ts.Unix(), 10))
	h.Set(standardwebhooks.HeaderWebhookSignature, sig)
	return h
}

// TestSignVerifiedByOfficialLibrary checks Sign's output with the official
// Standard Webhooks verifier, including two secrets during a rotation.
func TestSignVerifiedByOfficialLibrary(t *testing.T) {
	current, previous, stranger := NewSecret(), NewSecret(), NewSecret()
	body := []byte(`{"id":"evt_1","event":"service.down","timestamp":"2026-01-02T03:04:05Z","data":{"service_id":"svc_1"}}`)
	tests := []struct {
		name      string
		secrets   []string
		verifyAs  string
		wantParts int
		verified  bool
	}{
		{"one secret", []string{current}, current, 1, true},
		{"rotation: current verifies", []string{current, previous}, current, 2, true},
		{"rotation: previous verifies", []string{current, previous}, previous, 2, true},
		{"rotation: other secret fails", []string{current, previous}, stranger, 2, false},
		{"duplicate secret signs once", []string{current, current}, current, 1, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := time.Now()
			sig, err := Sign(tt.secrets, "msg_2KWPBgLlAfxdpx2AI54pPJ85f4W", ts, body)
			if err != nil {
				t.Fatal(err)
			}
			parts := strings.Split(sig, " ")
			if len(parts) != tt.wantParts {
				t.Fatalf("header %q has %d signatures, want %d", sig, len(parts), tt.wantParts)
			}
			for _, p := range parts {
				if !strings.HasPrefix(p, "v1,") {
					t.Fatalf("signature %q does not start with v1,", p)
				}
			}
			wh, err := standardwebhooks.NewWebhook(tt.verifyAs)
			if err != nil {
				t.Fatal(err)
			}
			err = wh.Verify(body, officialHeaders("msg_2KWPBgLlAfxdpx2AI54pPJ85f4W", ts, sig))
			if tt.verified && err != nil {
				t.Fatalf("official Verify = %v", err)
			}
			if !tt.verified && !errors.Is(err, standardwebhooks.ErrNoMatchingSignature) {
				t.Fatalf("official Verify = %v, want ErrNoMatchingSignature", err)
			}
			// A changed body, id or timestamp no longer verifies.
			if tt.verified {
				if err := wh.Verify(append(body[:len(body):len(body)], ' '), officialHeaders("msg_2KWPBgLlAfxdpx2AI54pPJ85f4W", ts, sig)); err == nil {
					t.Fatal("tampered body verified")
				}
				if err := wh.Verify(body, officialHeaders("msg_other", ts, sig)); err == nil {
					t.Fatal("other id verified")
				}
				if err := wh.Verify(body, officialHeaders("msg_2KWPBgLlAfxdpx2AI54pPJ85f4W", ts.Add(time.Second), sig)); err == nil {
					t.Fatal("other timestamp verified")
				}
			}
		})
	}
}

// TestSignKnownVector checks Sign against the test vector of the Standard
// Webhooks libraries and against an independent HMAC computation, so the
// test does not only compare the library with itself.
func TestSignKnownVector(t *testing.T) {
	const (
		secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
		id     = "msg_p5jXN8AQM9LWM0D4loKWxJek"
		want   = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
	)
	ts := time.Unix(1614265330, 0)
	body := []byte(`{"test": 2432232314}`)
	got, err := Sign([]string{secret}, id, ts, body)
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Fatalf("Sign = %q, want %q", got, want)
	}
	key, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, SecretPrefix))
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + strconv.FormatInt(ts.Unix(), 10) + "." + string(body)))
	if manual := "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil)); manual != got {
		t.Fatalf("manual HMAC %q != Sign %q", manual, got)
	}
	wh, _ := standardwebhooks.NewWebhook(secret)
	if err := wh.VerifyIgnoringTimestamp(body, officialHeaders(id, ts, got)); err != nil {
		t.Fatalf("official VerifyIgnoringTimestamp = %v", err)
	}
}

func TestSignRejects(t *testing.T) {
	good := NewSecret()
	ts := time.Unix(1700000000, 0)
	tests := []struct {
		name    string
		secrets []string
		id      string
		ts      time.Time
		field   string
	}{
		{"no secrets", nil, "msg_1", ts, "secrets"},
		{"malformed second secret", []string{good, "whsec_short"}, "msg_1", ts, "secrets[1]"},
		{"empty id", []string{good}, "", ts, "id"},
		{"dot in id", []string{good}, "msg.1", ts, "id"},
		{"space in id", []string{good}, "msg 1", ts, "id"},
		{"id too long", []string{good}, strings.Repeat("a", 129), ts, "id"},
		{"zero timestamp", []string{good}, "msg_1", time.Time{}, "timestamp"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sig, err := Sign(tt.secrets, tt.id, tt.ts, []byte("{}"))
			if sig != "" {
				t.Fatalf("signature %q returned with an error", sig)
			}
			if got := fieldsOf(t, err); !slices.Equal(got, []string{tt.field}) {
				t.Fatalf("fields = %v, want [%s]", got, tt.field)
			}
		})
	}
}

func TestActiveSecrets(t *testing.T) {
	rotated := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name     string
		previous string
		now      time.Time
		want     []string
	}{
		{"no rotation", "", rotated, []string{"cur"}},
		{"just rotated", "old", rotated, []string{"cur", "old"}},
		{"23h59m later", "old", rotated.Add(RotationOverlap - time.Minute), []string{"cur", "old"}},
		{"24h later", "old", rotated.Add(RotationOverlap), []string{"cur"}},
		{"rotated to the same secret", "cur", rotated, []string{"cur"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ActiveSecrets("cur", tt.previous, rotated, tt.now); !slices.Equal(got, tt.want) {
				t.Fatalf("ActiveSecrets = %v, want %v", got, tt.want)
			}
		})
	}
}

func BenchmarkSign(b *testing.B) {
	body := []byte(`{"id":"evt_01HZX","event":"invoice.paid","timestamp":"2026-01-02T03:04:05Z","data":{"invoice_id":"inv_1","amount":"129.00","currency":"EUR"}}`)
	ts := time.Unix(1767323045, 0)
	for _, n := range []int{1, 2} {
		secrets := []string{NewSecret(), NewSecret()}[:n]
		b.Run(strconv.Itoa(n)+"-secrets", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Sign(secrets, "evt_01HZX", ts, body); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
