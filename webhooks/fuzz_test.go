package webhooks

import (
	"bytes"
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/telcoplatform/platform/models"
)

// FuzzSignVerify: Sign never panics; what it signs the Standard Webhooks
// verifier accepts with each active secret, and it refuses the delivery
// once the body, the id or the timestamp is changed, or under a signature
// header of the fuzzer's own. Sign refuses a bad input only with a
// VALIDATION_ERROR.
func FuzzSignVerify(f *testing.F) {
	key := bytes.Repeat([]byte{7}, 32)
	f.Add(key, []byte(nil), "msg_2Yq", int64(1767225600), []byte(`{"type":"service.activated"}`), "v1,AAAA")
	f.Add(bytes.Repeat([]byte{1}, 23), []byte("second"), "msg.dot", int64(0), []byte{}, "")
	f.Add(bytes.Repeat([]byte{2}, 64), bytes.Repeat([]byte{3}, 65), strings.Repeat("a", 129), int64(-1), []byte("\xff\xfe"), "v1, v2,x v1,"+strings.Repeat("=", 50))
	f.Add(bytes.Repeat([]byte{4}, 24), bytes.Repeat([]byte{5}, 24), "id_-", int64(4102444800), []byte("body"), "v1a,"+base64.StdEncoding.EncodeToString(key))
	f.Fuzz(func(t *testing.T, current, previous []byte, id string, unix int64, body []byte, forged string) {
		secrets := []string{SecretPrefix + base64.StdEncoding.EncodeToString(current)}
		if len(previous) > 0 {
			secrets = append(secrets, SecretPrefix+base64.StdEncoding.EncodeToString(previous))
		}
		ts := time.Unix(unix%(1<<40), 0) // within the years the formats handle
		header, err := Sign(secrets, id, ts, body)
		if err != nil {
			var e *models.Error
			if !errors.As(err, &e) || e.Code != models.CodeValidation {
				t.Fatalf("Sign: error %v is not a VALIDATION_ERROR", err)
			}
			return
		}
		headers := func(id, unix, sig string) http.Header {
			h := http.Header{}
			h.Set(HeaderID, id)
			h.Set(HeaderTimestamp, unix)
			h.Set(HeaderSignature, sig)
			return h
		}
		stamp := strconv.FormatInt(ts.Unix(), 10)
		for _, s := range secrets {
			wh, err := standardwebhooks.NewWebhook(s)
			if err != nil {
				t.Fatalf("the verifier refuses secret %q: %v", s, err)
			}
			if err := wh.VerifyIgnoringTimestamp(body, headers(id, stamp, header)); err != nil {
				t.Fatalf("a signed delivery is refused: %v (header %q)", err, header)
			}
			if wh.VerifyIgnoringTimestamp(append(bytes.Clone(body), 'x'), headers(id, stamp, header)) == nil {
				t.Fatal("a changed body is accepted")
			}
			if wh.VerifyIgnoringTimestamp(body, headers(id+"x", stamp, header)) == nil {
				t.Fatal("a changed id is accepted")
			}
			if wh.VerifyIgnoringTimestamp(body, headers(id, strconv.FormatInt(ts.Unix()+1, 10), header)) == nil {
				t.Fatal("a changed timestamp is accepted")
			}
			if !carriesOne(forged, header) && wh.VerifyIgnoringTimestamp(body, headers(id, stamp, forged)) == nil {
				t.Fatalf("the forged header %q is accepted", forged)
			}
		}
	})
}

// carriesOne reports whether forged holds one of the signatures of header.
func carriesOne(forged, header string) bool {
	for _, sig := range strings.Fields(header) {
		if strings.Contains(forged, strings.TrimPrefix(sig, "v1,")) {
			return true
		}
	}
	return false
}

// FuzzValidateSecret: ValidateSecret never panics; it accepts exactly the
// canonical "whsec_" + padded base64 of 24 to 64 bytes, which the
// verifier reads back to the same key.
func FuzzValidateSecret(f *testing.F) {
	f.Add(NewSecret())
	f.Add("whsec_" + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{9}, 24)))
	f.Add("whsec_" + base64.RawStdEncoding.EncodeToString(bytes.Repeat([]byte{9}, 31)))
	f.Add("whsec_AAAA\nAAAA")
	f.Add("whsec_")
	f.Add("sk_live_nope")
	f.Fuzz(func(t *testing.T, s string) {
		err := ValidateSecret(s)
		key, issue := decodeSecret(s)
		if (err == nil) != (issue == "") {
			t.Fatalf("%q: ValidateSecret %v, decodeSecret issue %q", s, err, issue)
		}
		if err != nil {
			if models.ErrorCode(err) != models.CodeValidation || strings.Contains(err.Error(), strings.TrimPrefix(s, SecretPrefix)) && len(s) > len(SecretPrefix)+8 {
				t.Fatalf("%q: error %v is not a VALIDATION_ERROR, or shows the secret", s, err)
			}
			return
		}
		if SecretPrefix+base64.StdEncoding.EncodeToString(key) != s || len(key) < MinSecretBytes || len(key) > MaxSecretBytes {
			t.Fatalf("%q accepted: key of %d bytes", s, len(key))
		}
	})
}
