package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/validation"
	"github.com/gofiber/fiber/v2"

	"github.com/telcoplatform/platform/models"
)

// statusOf is the one table that maps error codes to HTTP statuses (DECISIONS 3).
var statusOf = map[models.Code]int{
	models.CodeValidation:              http.StatusBadRequest,
	models.CodeInvalidJSON:             http.StatusBadRequest,
	models.CodeUnsupportedAPIVersion:   http.StatusBadRequest,
	models.CodeQueryTooDeep:            http.StatusBadRequest,
	models.CodeQueryTooComplex:         http.StatusBadRequest,
	models.CodeUnauthenticated:         http.StatusUnauthorized,
	models.CodeInvalidAPIKey:           http.StatusUnauthorized,
	models.CodeInvalidToken:            http.StatusUnauthorized,
	models.CodeTokenExpired:            http.StatusUnauthorized,
	models.CodeInvalidSignature:        http.StatusUnauthorized,
	models.CodeInsufficientFunds:       http.StatusPaymentRequired,
	models.CodeInsufficientPermissions: http.StatusForbidden,
	models.CodeIPNotAllowed:            http.StatusForbidden,
	models.CodeAccessRestricted:        http.StatusForbidden,
	models.CodeNotFound:                http.StatusNotFound,
	models.CodeMethodNotAllowed:        http.StatusMethodNotAllowed,
	models.CodeDuplicatePayment:        http.StatusConflict,
	models.CodeServiceConflict:         http.StatusConflict,
	models.CodeInvalidStateTransition:  http.StatusConflict,
	models.CodeIdempotencyKeyInUse:     http.StatusConflict,
	models.CodeAlreadyExists:           http.StatusConflict,
	models.CodeResourceLimit:           http.StatusConflict,
	models.CodeFailedDependency:        http.StatusFailedDependency,
	models.CodePayloadTooLarge:         http.StatusRequestEntityTooLarge,
	models.CodeUnsupportedMediaType:    http.StatusUnsupportedMediaType,
	models.CodeUnavailableAtLocation:   http.StatusUnprocessableEntity,
	models.CodeInsufficientBandwidth:   http.StatusUnprocessableEntity,
	models.CodeLocationNotServiceable:  http.StatusUnprocessableEntity,
	models.CodeIdempotencyKeyMismatch:  http.StatusUnprocessableEntity,
	models.CodeRateLimitExceeded:       http.StatusTooManyRequests,
	models.CodeConcurrencyLimit:        http.StatusTooManyRequests,
	models.CodeInternal:                http.StatusInternalServerError,
	models.CodeServiceMaintenance:      http.StatusServiceUnavailable,
	models.CodeDependencyUnavailable:   http.StatusServiceUnavailable,
}

// HTTPStatus returns the HTTP status of an error code (500 for unknown codes).
func HTTPStatus(code models.Code) int {
	if s, ok := statusOf[code]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// ErrorDetail is the `error` object of every error answer.
type ErrorDetail struct {
	Code      models.Code    `json:"code" example:"VALIDATION_ERROR"`
	Message   string         `json:"message" example:"name: is required"`
	Details   map[string]any `json:"details" doc:"Details of the error; an empty object when there are none"`
	RequestID string         `json:"request_id" example:"req_3fK9aZ"`
}

// ErrorBody is the body of every error answer (DECISIONS 3).
type ErrorBody struct {
	Error    ErrorDetail `json:"error"`
	Metadata *Metadata   `json:"metadata,omitempty"`
	status   int
	headers  map[string]string
}

func (e *ErrorBody) setMetadata(m Metadata) { e.Metadata = &m }

// errorAnswer wraps ErrorBody so that it satisfies error and huma.StatusError
// without a method named Error clashing with the JSON field.
type errorAnswer struct{ *ErrorBody }

// Error returns the code and the message.
func (e errorAnswer) Error() string {
	return string(e.ErrorBody.Error.Code) + ": " + e.ErrorBody.Error.Message
}

// GetStatus returns the HTTP status of the answer.
func (e errorAnswer) GetStatus() int { return e.status }

// ContentType makes huma answer errors as application/json.
func (e errorAnswer) ContentType(string) string { return "application/json" }

// MarshalJSON writes the wrapped body.
func (e errorAnswer) MarshalJSON() ([]byte, error) { return jsonMarshal(e.ErrorBody) }

// newErrorBody turns any error into the documented answer, logging internal
// causes (which are never shown to the client).
func newErrorBody(ctx context.Context, log *slog.Logger, err error) *ErrorBody {
	e := models.AnswerError(models.AsError(err), err)
	status := HTTPStatus(e.Code)
	info := requestInfoFrom(ctx)
	info.Metrics.APIError(string(e.Code))
	if status >= 500 && log != nil {
		log.ErrorContext(ctx, "request failed", "request_id", info.RequestID, "code", e.Code, "error", err)
	}
	details := e.Details
	if details == nil {
		details = map[string]any{}
	}
	body := &ErrorBody{status: status, Error: ErrorDetail{Code: e.Code, Message: e.Message, Details: details, RequestID: info.RequestID}}
	if ra, ok := e.Details["retry_after"]; ok && (status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable) {
		body.headers = map[string]string{"Retry-After": toString(ra)}
	}
	if status == http.StatusUnauthorized {
		body.headers = map[string]string{"WWW-Authenticate": bearerChallenge(info.Realm, e.Code)}
	}
	return body
}

// bearerChallenge is the WWW-Authenticate header of a 401 (RFC 6750 section
// 3): the realm, and error="invalid_token" when a credential was presented
// and refused.
func bearerChallenge(realm string, code models.Code) string {
	ch := `Bearer realm="` + strings.ReplaceAll(realm, `"`, "") + `"`
	switch code {
	case models.CodeInvalidToken, models.CodeTokenExpired, models.CodeInvalidAPIKey, models.CodeInvalidSignature:
		ch += `, error="invalid_token"`
	}
	return ch
}

// init installs humaError as huma's error constructor. huma.NewErrorWithContext
// is a package-level variable of huma: this is the platform's one exception to
// "no package-level mutable globals", set once here and nowhere else.
func init() {
	huma.NewErrorWithContext = humaError
}

// humaError converts huma's own failures (parse, validation, size, content
// type) and handlers' errors into the platform's error answer.
func humaError(hctx huma.Context, status int, msg string, errs ...error) huma.StatusError {
	var ctx context.Context = context.Background()
	if hctx != nil {
		ctx = hctx.Context()
	}
	log := loggerFrom(ctx)
	for _, err := range errs {
		var me *models.Error
		if errors.As(err, &me) {
			return errorAnswer{newErrorBody(ctx, log, me)}
		}
		var eb errorAnswer
		if errors.As(err, &eb) {
			return eb
		}
	}
	var e *models.Error
	switch status {
	case http.StatusBadRequest:
		if isBodyParseFailure(errs) {
			e = models.Errorf(models.CodeInvalidJSON, "the request body is not valid JSON: %s", plainJSONError(firstMessage(errs)))
		} else {
			e = validationFromHuma(msg, errs)
		}
	case http.StatusUnprocessableEntity:
		e = validationFromHuma(msg, errs)
	case http.StatusUnsupportedMediaType:
		e = models.Errorf(models.CodeUnsupportedMediaType, "send the body as application/json")
	case http.StatusRequestEntityTooLarge:
		e = models.Errorf(models.CodePayloadTooLarge, "the request body is too large")
	case http.StatusNotFound:
		e = models.Errorf(models.CodeNotFound, "not found")
	case http.StatusMethodNotAllowed:
		e = models.Errorf(models.CodeMethodNotAllowed, "method not allowed")
	case http.StatusNotAcceptable:
		e = models.Errorf(models.CodeValidation, "this endpoint answers application/json only")
		e.WithDetail("fields", []models.FieldIssue{{Field: "Accept", Issue: "must accept application/json"}})
	default:
		if status >= 500 || status == 0 {
			cause := errors.New(msg)
			if len(errs) > 0 && errs[0] != nil {
				cause = errors.Join(errs...)
			}
			e = models.Internal(cause)
		} else {
			e = models.Errorf(models.CodeValidation, "%s", msg)
			e.WithDetail("fields", []models.FieldIssue{{Field: "(request)", Issue: msg}})
		}
	}
	return errorAnswer{newErrorBody(ctx, log, e)}
}

func isBodyParseFailure(errs []error) bool {
	for _, err := range errs {
		var d *huma.ErrorDetail
		if errors.As(err, &d) && d.Location == "body" {
			return true
		}
	}
	return false
}

// goTypeInJSONError is the part of encoding/json's messages that names the
// Go type a value was meant for ("into Go value of type float64").
var goTypeInJSONError = regexp.MustCompile(`^(?:json: )?cannot unmarshal (.+?) into Go (?:struct field \S+|value) of type \S+$`)

// plainJSONError words a JSON decoder's message for the client, without the
// Go types it names: "cannot unmarshal number 1e400 into Go value of type
// float64" is "number 1e400 is out of range".
func plainJSONError(msg string) string {
	if m := goTypeInJSONError.FindStringSubmatch(msg); m != nil {
		if strings.HasPrefix(m[1], "number ") {
			return m[1] + " is out of range"
		}
		return m[1] + " is not of the expected type"
	}
	return strings.TrimPrefix(msg, "json: ")
}

func firstMessage(errs []error) string {
	for _, err := range errs {
		var d *huma.ErrorDetail
		if errors.As(err, &d) {
			return d.Message
		}
		if err != nil {
			return err.Error()
		}
	}
	return ""
}

// numberTypeError is encoding/json's message for a number that the Go
// field it was meant for refused after huma's schema let it through (an
// integer out of the field's range, an amount models.Money refused): the
// value, the field's JSON path (without array indexes) after the name of
// its struct, and the field's Go type.
var numberTypeError = regexp.MustCompile(`^json: cannot unmarshal number (\S+) into Go struct field [^.\s]*\.([A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*) of type (\S+)$`)

// numberBound is huma's message for a number outside a bound, the bound
// printed with %v (2147483647 as 2.147483647e+09).
var numberBound = regexp.MustCompile(`^(expected number (?:<=|>=|<|>|to be a multiple of) )(\S+)$`)

// plainBound prints the bound of a numberBound message as a plain number.
func plainBound(issue string) string {
	m := numberBound.FindStringSubmatch(issue)
	if m == nil {
		return issue
	}
	f, err := strconv.ParseFloat(m[2], 64)
	if err != nil || math.Abs(f) >= 1e21 {
		return issue
	}
	return m[1] + strconv.FormatFloat(f, 'f', -1, 64)
}

// intBits are the sizes of encoding/json's integer destinations.
var intBits = map[string]uint{"int": 64, "int64": 64, "int32": 32, "int16": 16, "int8": 8,
	"uint": 64, "uint64": 64, "uint32": 32, "uint16": 16, "uint8": 8}

// numberIssue says why the number literal does not fit goType.
func numberIssue(literal, goType string) string {
	bits, ok := intBits[goType]
	if !ok {
		return "is out of range"
	}
	if f, err := strconv.ParseFloat(literal, 64); err == nil && f != math.Trunc(f) {
		return "must be an integer"
	}
	unsigned := strings.HasPrefix(goType, "u")
	switch {
	case strings.HasPrefix(literal, "-") && unsigned:
		return "is out of range: must be at least 0"
	case strings.HasPrefix(literal, "-"):
		return "is out of range: must be at least " + strconv.FormatInt(int64(math.MinInt64)>>(64-bits), 10)
	case unsigned:
		return "is out of range: must be at most " + strconv.FormatUint(uint64(math.MaxUint64)>>(64-bits), 10)
	default:
		return "is out of range: must be at most " + strconv.FormatInt(int64(math.MaxInt64)>>(64-bits), 10)
	}
}

// numberField finds, in the JSON document body, the number literal at
// the dotted path encoding/json named (which leaves out array indexes) and
// returns its path with them (steps[0].order); dotted when it is not found.
func numberField(body, dotted, literal string) string {
	dec := json.NewDecoder(strings.NewReader(body))
	dec.UseNumber()
	var doc any
	if dec.Decode(&doc) != nil {
		return dotted
	}
	if at, ok := findNumber(doc, strings.Split(dotted, "."), literal, ""); ok {
		return at
	}
	return dotted
}

func findNumber(v any, keys []string, literal, at string) (string, bool) {
	switch x := v.(type) {
	case []any:
		for i, item := range x {
			if found, ok := findNumber(item, keys, literal, at+"["+strconv.Itoa(i)+"]"); ok {
				return found, true
			}
		}
	case map[string]any:
		if len(keys) == 0 {
			return "", false
		}
		name := keys[0]
		child, ok := x[name]
		for k, val := range x { // encoding/json matches names in any case
			if !ok && strings.EqualFold(k, name) {
				name, child, ok = k, val, true
			}
		}
		if !ok {
			return "", false
		}
		if at != "" {
			name = at + "." + name
		}
		return findNumber(child, keys[1:], literal, name)
	case json.Number:
		return at, len(keys) == 0 && string(x) == literal
	}
	return "", false
}

var requiredProperty = regexp.MustCompile(`^expected required property (\S+) to be present$`)

// emptyRequiredString is huma's answer to "" where minLength is 1.
var emptyRequiredString = fmt.Sprintf(validation.MsgExpectedMinLength, 1)

// validationFromHuma lists huma's validation failures as {field, issue}.
func validationFromHuma(msg string, errs []error) *models.Error {
	var issues []models.FieldIssue
	for _, err := range errs {
		var d *huma.ErrorDetail
		if errors.As(err, &d) {
			field := strings.TrimPrefix(d.Location, "body.")
			field = strings.TrimPrefix(field, "query.")
			field = strings.TrimPrefix(field, "path.")
			field = strings.TrimPrefix(field, "header.")
			issue := plainBound(d.Message)
			if field == "body" {
				field = "(body)"
				if m := numberTypeError.FindStringSubmatch(d.Message); m != nil {
					// A number huma's schema let through and its Go field
					// refused: name the field (with its array indexes)
					// and the reason, not the Go types.
					body, _ := d.Value.(string)
					field, issue = numberField(body, m[2], m[1]), numberIssue(m[1], m[3])
					if m[3] == "models.Money" {
						// An amount keeps the path encoding/json gives,
						// without indexes (services.unit_price).
						field, issue = m[2], "must be a decimal number"
						if _, err := models.ParseMoney(m[1]); err != nil {
							issue = err.Error()
						}
					}
				} else if goTypeInJSONError.MatchString(d.Message) {
					issue = plainJSONError(d.Message)
				}
			}
			// An empty string where at least one character is required
			// answers as a missing one does (the domain's wording).
			if issue == emptyRequiredString {
				issue = "is required"
			}
			// huma's format:"email" failure carries net/mail's own words.
			if strings.HasPrefix(issue, "expected string to be RFC 5322 email") {
				issue = "must be an e-mail address such as noc@example.com"
			}
			// huma reports a missing property at its parent: name the property itself.
			if m := requiredProperty.FindStringSubmatch(d.Message); m != nil {
				if field == "(body)" {
					field = m[1]
				} else {
					field += "." + m[1]
				}
				issue = "is required"
			}
			issues = append(issues, models.FieldIssue{Field: field, Issue: issue})
		} else if err != nil {
			issues = append(issues, models.FieldIssue{Field: "(request)", Issue: err.Error()})
		}
	}
	if len(issues) == 0 {
		issues = append(issues, models.FieldIssue{Field: "(request)", Issue: msg})
	}
	return models.Invalid(issues...)
}

// fiberErrorHandler answers every error that reaches Fiber (unknown routes,
// wrong methods, oversized bodies, panics, middleware failures) in the
// documented shape.
func (s *Server) fiberErrorHandler(c *fiber.Ctx, err error) error {
	if requestInfoFrom(c.UserContext()).RequestID == "" {
		// Refused before any middleware ran (a body above the server's
		// ceiling): give the answer the request id, version and rate-limit
		// headers that every answer carries.
		_ = s.startRequest(c)
		s.setClientInfo(c)
		s.countAnonymously(c)
	}
	var fe *fiber.Error
	if errors.As(err, &fe) {
		switch fe.Code {
		case fiber.StatusNotFound:
			err = models.Errorf(models.CodeNotFound, "no endpoint at %s %s", c.Method(), c.Path())
		case fiber.StatusMethodNotAllowed:
			// Also a method Fiber does not know (see refuseUnknownMethods).
			if allow := s.allowedMethods(c.Path()); len(allow) > 0 {
				c.Set(fiber.HeaderAllow, strings.Join(allow, ", "))
				err = models.Errorf(models.CodeMethodNotAllowed, "%s is not allowed here; allowed: %s", c.Method(), strings.Join(allow, ", "))
			} else {
				err = models.Errorf(models.CodeNotFound, "no endpoint at %s %s", c.Method(), c.Path())
			}
		case fiber.StatusRequestEntityTooLarge:
			err = bodyTooLarge(s.bodyLimit(c.Method(), c.Path()))
		case fiber.StatusUnsupportedMediaType:
			err = models.Errorf(models.CodeUnsupportedMediaType, "send the body as application/json")
		case fiber.StatusRequestHeaderFieldsTooLarge, fiber.StatusRequestURITooLong:
			// The request line and the headers are read into one buffer:
			// a long URL and a large header overflow it alike.
			issue := fmt.Sprintf("the request line (method and URL) and the headers must fit in %d bytes together", MaxHeaderBytes)
			err = models.Errorf(models.CodeValidation, "the URL or the headers are too large (at most %d bytes together)", MaxHeaderBytes).
				WithDetail("fields", []models.FieldIssue{{Field: "(headers)", Issue: issue}}).WithDetail("limit_bytes", MaxHeaderBytes)
		case fiber.StatusRequestTimeout:
			err = models.Invalid(models.FieldIssue{Field: "(request)", Issue: "the request was not received in time"})
		default:
			if fe.Code < 500 {
				err = models.Invalid(models.FieldIssue{Field: "(request)", Issue: fe.Message})
			} else {
				err = models.Internal(fe)
			}
		}
	}
	body := newErrorBody(c.UserContext(), s.log, err)
	body.setMetadata(s.metadataFor(c.UserContext()))
	for k, v := range body.headers {
		c.Set(k, v)
	}
	if c.Method() == fiber.MethodHead {
		return c.SendStatus(body.status)
	}
	c.Status(body.status)
	return c.JSON(body)
}
