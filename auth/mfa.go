package auth

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"image/png"
	"math/big"
	"strings"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/identity"
)

// TOTP parameters (RFC 6238 defaults that every authenticator app supports).
const (
	TOTPIssuer = "Telco Platform"
	totpPeriod = 30
	totpSkew   = 1 // one step before and after now
)

// TOTPSetup is a new TOTP factor to show the user once.
type TOTPSetup struct {
	Secret      string   // base32
	URL         string   // otpauth://totp/...
	QRCode      string   // data:image/png;base64,...
	BackupCodes []string // single use
}

// NewTOTPSetup generates a TOTP secret for account (the user's e-mail), its
// otpauth URL, a PNG QR code as a data URI and backup codes.
// Errors: INTERNAL_ERROR.
func NewTOTPSetup(account string) (*TOTPSetup, error) {
	key, err := totp.Generate(totp.GenerateOpts{Issuer: TOTPIssuer, AccountName: account, Period: totpPeriod, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
	if err != nil {
		return nil, models.Internal(err)
	}
	img, err := key.Image(256, 256)
	if err != nil {
		return nil, models.Internal(err)
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return nil, models.Internal(err)
	}
	codes := make([]string, identity.MFABackupCodes)
	for i := range codes {
		c := strings.ToLower(models.RandomString(10))
		codes[i] = c[:5] + "-" + c[5:]
	}
	return &TOTPSetup{Secret: key.Secret(), URL: key.URL(), QRCode: "data:image/png;base64," + base64.StdEncoding.EncodeToString(buf.Bytes()), BackupCodes: codes}, nil
}

// MatchTOTP reports the time step a 6-digit code matches within one step of
// now (models.TOTPMatcher).
func MatchTOTP(secret, code string, now time.Time) (int64, bool) {
	if len(code) != 6 {
		return 0, false
	}
	step := now.Unix() / totpPeriod
	for d := int64(-totpSkew); d <= totpSkew; d++ {
		at := time.Unix((step+d)*totpPeriod, 0).UTC()
		want, err := totp.GenerateCodeCustom(secret, at, totp.ValidateOpts{Period: totpPeriod, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
		if err == nil && identity.MatchCode(code, want) {
			return step + d, true
		}
	}
	return 0, false
}

// NewOneTimeCode returns a random 6-digit code for e-mail and SMS verification.
func NewOneTimeCode() string {
	n, err := rand.Int(rand.Reader, big.NewInt(1_000_000))
	if err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return fmt.Sprintf("%06d", n.Int64())
}
