package api

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"slices"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/telcoplatform/platform/auth"
	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/eventlog"
	"github.com/telcoplatform/platform/models/identity"
)

// TOTPSetupOutput is the answer of TOTP enrolment.
type TOTPSetupOutput struct {
	Body struct {
		Envelope
		Secret      string   `json:"secret" doc:"base32 TOTP secret, shown once"`
		QRCode      string   `json:"qr_code" doc:"data URI of a PNG QR code of setup_url"`
		BackupCodes []string `json:"backup_codes" doc:"single-use codes, shown once"`
		SetupURL    string   `json:"setup_url" doc:"otpauth:// URI"`
	}
}

// MFAVerifyBody is the body of POST /auth/mfa/verify.
type MFAVerifyBody struct {
	ChallengeID string `json:"challenge_id,omitempty" doc:"the challenge to satisfy; omit to confirm a new TOTP enrolment"`
	Method      string `json:"method" enum:"totp,backup_code,sms,email" doc:"totp (a TOTP or backup code), backup_code, email or sms (a code sent by POST /auth/mfa/challenges/{challenge_id}/send; sms without challenge_id confirms a phone number)"`
	Code        string `json:"code" maxLength:"32" example:"123456"`
}

// MFAVerifyOutput is the answer of a successful verification.
type MFAVerifyOutput struct {
	Body struct {
		Envelope
		Verified    bool   `json:"verified"`
		ChallengeID string `json:"challenge_id,omitempty" doc:"send it as X-MFA-Challenge-Id when repeating the challenged request"`
		Enrolled    bool   `json:"enrolled"`
	}
}

func (s *Server) registerMFA() {
	tags := []string{"Authentication"}
	register(s, huma.Operation{OperationID: "mfa-totp-setup", Method: http.MethodPost, Path: "/auth/mfa/totp/setup", Summary: "Enrol a TOTP second factor",
		Description: "For users (OAuth authorization code, device or SAML sign-in). Returns the secret, a QR code, backup codes and the otpauth URL once; the factor is active after POST /auth/mfa/verify with a first valid code.",
		Tags:        tags, Responses: map[string]*huma.Response{"409": {Description: "TOTP is already enrolled"}},
	}, access{}, func(ctx context.Context, _ *struct{}) (*TOTPSetupOutput, error) {
		p := principal(ctx)
		if p.Kind != models.PrincipalUser || p.UserID == "" {
			return nil, models.Errorf(models.CodeInsufficientPermissions, "MFA enrolment is for users signed in through OAuth, the device flow or SAML, not for API keys or clients")
		}
		u, err := s.identity.DeviceUser(ctx, p.UserID)
		if err != nil {
			return nil, err
		}
		setup, err := auth.NewTOTPSetup(u.Email)
		if err != nil {
			return nil, err
		}
		if err := s.identity.BeginTOTPEnrollment(ctx, u.ID, setup.Secret, setup.BackupCodes); err != nil {
			return nil, err
		}
		s.audit(ctx, identity.AuditEvent{EventType: identity.AuditMFAEnrolled, OrganizationID: p.OrganizationID, UserID: u.ID, AuthenticationMethod: "totp"})
		out := &TOTPSetupOutput{}
		out.Body.Secret, out.Body.QRCode, out.Body.BackupCodes, out.Body.SetupURL = setup.Secret, setup.QRCode, setup.BackupCodes, setup.URL
		return out, nil
	})
	register(s, huma.Operation{OperationID: "mfa-verify", Method: http.MethodPost, Path: "/auth/mfa/verify", Summary: "Verify a second-factor code",
		Description: "With challenge_id: satisfies that challenge (then repeat the challenged request with X-MFA-Challenge-Id). Without: confirms a new TOTP enrolment. A TOTP code is accepted once; a backup code once; 5 wrong codes lock verification for 15 minutes (403 ACCESS_RESTRICTED).",
		Tags:        tags,
	}, access{}, func(ctx context.Context, in *struct{ Body MFAVerifyBody }) (*MFAVerifyOutput, error) {
		p := principal(ctx)
		if p.Kind != models.PrincipalUser || p.UserID == "" {
			return nil, models.Errorf(models.CodeInsufficientPermissions, "MFA is for users signed in through OAuth, the device flow or SAML")
		}
		var verr error
		switch m, ch := in.Body.Method, in.Body.ChallengeID; {
		case (m == "email" || m == "sms") && ch != "":
			verr = s.identity.VerifyMFACode(ctx, p.UserID, ch, m, in.Body.Code)
		case m == "sms":
			verr = s.identity.ConfirmPhone(ctx, p.UserID, in.Body.Code)
		case m == "email":
			return nil, models.Invalid(models.FieldIssue{Field: "challenge_id", Issue: "is required with method email"})
		default:
			if ch != "" {
				if _, err := s.identity.PendingMFAChallenge(ctx, p.UserID, ch); err != nil {
					return nil, err
				}
			}
			verr = s.identity.VerifySecondFactor(ctx, p.UserID, in.Body.Code, auth.MatchTOTP)
		}
		if err := verr; err != nil {
			s.audit(ctx, identity.AuditEvent{EventType: identity.AuditMFAFailed, Outcome: "failure", OrganizationID: p.OrganizationID, UserID: p.UserID,
				AuthenticationMethod: in.Body.Method, SessionID: in.Body.ChallengeID, Reason: string(models.ErrorCode(err))})
			return nil, err
		}
		s.audit(ctx, identity.AuditEvent{EventType: identity.AuditMFAVerified, OrganizationID: p.OrganizationID, UserID: p.UserID, AuthenticationMethod: in.Body.Method, SessionID: in.Body.ChallengeID})
		out := &MFAVerifyOutput{}
		out.Body.Verified, out.Body.Enrolled = true, true
		if in.Body.ChallengeID != "" && in.Body.Method != "email" && in.Body.Method != "sms" { // codes by message verify their challenge themselves
			if err := s.identity.MarkMFAChallengeVerified(ctx, in.Body.ChallengeID); err != nil {
				return nil, err
			}
			out.Body.ChallengeID = in.Body.ChallengeID
		}
		return out, nil
	})
	register(s, huma.Operation{OperationID: "mfa-send-code", Method: http.MethodPost, Path: "/auth/mfa/challenges/{challenge_id}/send", Summary: "Send a one-time code for a challenge by e-mail or SMS",
		Description: "Sends a 6-digit code for a pending challenge to the user's e-mail address or confirmed phone number, through the notification outbox (SMTP and the SMS provider). A new code replaces the previous one; at most 5 codes per challenge, 30 seconds apart (429 RATE_LIMIT_EXCEEDED with details.retry_after). Then POST /auth/mfa/verify with method email or sms.",
		Tags:        tags, DefaultStatus: http.StatusAccepted,
	}, access{}, func(ctx context.Context, in *struct {
		ChallengeID string `path:"challenge_id" maxLength:"40"`
		Body        struct {
			Method string `json:"method" enum:"email,sms"`
		}
	}) (*MFACodeSentOutput, error) {
		p := principal(ctx)
		if p.Kind != models.PrincipalUser || p.UserID == "" {
			return nil, models.Errorf(models.CodeInsufficientPermissions, "MFA is for users signed in through OAuth, the device flow or SAML")
		}
		u, err := s.identity.DeviceUser(ctx, p.UserID)
		if err != nil {
			return nil, err
		}
		sent, err := s.identity.SendMFACode(ctx, p.OwnScope(), u, in.ChallengeID, in.Body.Method, auth.NewOneTimeCode())
		if err != nil {
			return nil, err
		}
		s.audit(ctx, identity.AuditEvent{EventType: identity.AuditMFACodeSent, OrganizationID: p.OrganizationID, UserID: p.UserID, AuthenticationMethod: in.Body.Method, SessionID: sent.ChallengeID})
		out := &MFACodeSentOutput{}
		out.Body.ChallengeID, out.Body.Method, out.Body.Destination, out.Body.ExpiresAt = sent.ChallengeID, sent.Method, sent.Destination, models.Timestamp(sent.ExpiresAt)
		return out, nil
	})
	register(s, huma.Operation{OperationID: "mfa-sms-setup", Method: http.MethodPost, Path: "/auth/mfa/sms/setup", Summary: "Add a phone number for SMS codes",
		Description: "For users with a confirmed TOTP factor, and challenged with an existing factor (changing a second factor needs one): stores the E.164 number as pending and sends it a confirmation code by SMS; POST /auth/mfa/verify with method sms and that code (no challenge_id) confirms it, after which challenges offer sms. A confirmed number keeps receiving codes until the new one is confirmed.",
		Tags:        tags, DefaultStatus: http.StatusAccepted,
	}, access{mfa: true}, func(ctx context.Context, in *struct {
		Body struct {
			PhoneNumber string `json:"phone_number" maxLength:"16" example:"+14155550123"`
		}
	}) (*MFACodeSentOutput, error) {
		p := principal(ctx)
		if p.Kind != models.PrincipalUser || p.UserID == "" {
			return nil, models.Errorf(models.CodeInsufficientPermissions, "MFA is for users signed in through OAuth, the device flow or SAML")
		}
		if err := s.identity.BeginPhoneEnrollment(ctx, p.OwnScope(), p.UserID, in.Body.PhoneNumber, auth.NewOneTimeCode()); err != nil {
			return nil, err
		}
		s.audit(ctx, identity.AuditEvent{EventType: identity.AuditMFACodeSent, OrganizationID: p.OrganizationID, UserID: p.UserID, AuthenticationMethod: "sms", Reason: "phone confirmation"})
		out := &MFACodeSentOutput{}
		out.Body.Method, out.Body.Destination = "sms", eventlog.MaskRecipient(in.Body.PhoneNumber)
		out.Body.ExpiresAt = models.Timestamp(s.now().Add(identity.MFAPhoneCodeTTL))
		return out, nil
	})
}

// MFACodeSentOutput says where a one-time code went.
type MFACodeSentOutput struct {
	Body struct {
		Envelope
		ChallengeID string `json:"challenge_id,omitempty"`
		Method      string `json:"method" enum:"email,sms"`
		Destination string `json:"destination" doc:"masked address or number"`
		ExpiresAt   string `json:"expires_at"`
	}
}

// needsMFA reports whether an operation challenges users with a second
// factor (DECISIONS 7): its access rule says so, with mfa (everything that
// starts provisioning, API-key create and rotate, certificate registration)
// or sensitive (payments and payment-method changes).
func needsMFA(a access) bool { return a.mfa || a.sensitive }

// MFAOperations returns "METHOD /v1/path" of every operation that
// challenges users with a second factor, sorted (documentation and tests).
func (s *Server) MFAOperations() []string {
	var out []string
	for path, item := range s.API.OpenAPI().Paths {
		for _, op := range []*huma.Operation{item.Get, item.Post, item.Put, item.Patch, item.Delete} {
			if op == nil || !strings.HasPrefix(path, "/v1/") {
				continue
			}
			if a, ok := op.Metadata[accessKey].(access); ok && needsMFA(a) {
				out = append(out, op.Method+" "+path)
			}
		}
	}
	slices.Sort(out)
	return out
}

// mfaChallenge is the authorize step's second-factor check: a user principal
// with TOTP enrolled must present a verified challenge (X-MFA-Challenge-Id)
// for the operation, or gets 401 with the flat mfa_required body. Machine
// credentials (API keys, clients, certificates) are not challenged. It
// returns false when it has answered.
func (s *Server) mfaChallenge(ctx huma.Context, a access, p *models.Principal) bool {
	op := ctx.Operation()
	if p.Kind != models.PrincipalUser || p.UserID == "" || !needsMFA(a) {
		return true
	}
	rctx := ctx.Context()
	enr, err := s.identity.MFAEnrollmentOf(rctx, p.UserID)
	if err != nil {
		huma.WriteErr(s.API, ctx, 0, "", err)
		return false
	}
	if enr == nil || !enr.Confirmed {
		return true
	}
	u := ctx.URL()
	operation := challengedOperation(op.Method, u.EscapedPath())
	if id := ctx.Header("X-MFA-Challenge-Id"); id != "" {
		ok, err := s.identity.ConsumeMFAChallenge(rctx, p.UserID, id, operation)
		if err != nil {
			huma.WriteErr(s.API, ctx, 0, "", err)
			return false
		}
		if ok {
			return true
		}
	}
	ch, err := s.identity.CreateMFAChallenge(rctx, p.UserID, operation)
	if err != nil {
		huma.WriteErr(s.API, ctx, 0, "", err)
		return false
	}
	s.audit(rctx, identity.AuditEvent{EventType: identity.AuditMFAChallenged, OrganizationID: p.OrganizationID, UserID: p.UserID, SessionID: ch.ID, Reason: operation})
	methods, err := s.identity.MFAMethods(rctx, p.UserID)
	if err != nil {
		huma.WriteErr(s.API, ctx, 0, "", err)
		return false
	}
	body, _ := json.Marshal(map[string]any{
		"error": "mfa_required", "challenge_id": ch.ID, "methods": methods,
		"message": "this operation needs a second factor: POST /v1/auth/mfa/verify with challenge_id, method and code (for email or sms, first POST /v1/auth/mfa/challenges/{challenge_id}/send), then repeat the request with X-MFA-Challenge-Id",
	})
	ctx.SetHeader("Content-Type", "application/json")
	ctx.SetHeader("Cache-Control", "no-store")
	ctx.SetStatus(http.StatusUnauthorized)
	_, _ = ctx.BodyWriter().Write(body)
	return false
}

// challengedOperation names what a challenge is for: the method and the
// request's own path (escaped, so it is always valid text) without its
// mount (/v1 or /api/v1), so a challenge
// passed to rotate one key, or change one user, is not accepted for
// another. A path too long for the challenge's column is named by its
// SHA-256.
func challengedOperation(method, path string) string {
	path = strings.TrimSuffix(path, "/")
	path = strings.TrimPrefix(strings.TrimPrefix(path, "/api"), "/v1")
	if op := method + " " + path; len(op) <= 300 {
		return op
	}
	sum := sha256.Sum256([]byte(path))
	return method + " sha256:" + hex.EncodeToString(sum[:])
}
