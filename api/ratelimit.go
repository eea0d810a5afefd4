package api

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/gofiber/fiber/v2"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/identity"
	"github.com/telcoplatform/platform/ratelimit"
	"github.com/telcoplatform/platform/rowversion"
)

// Default anonymous limits, per client address, of requests without a valid
// credential (ANONYMOUS_HOURLY_LIMIT and ANONYMOUS_BURST_LIMIT change them).
const (
	defaultAnonymousHourly = 1000
	defaultAnonymousBurst  = 100
)

// anonymousLimits returns the configured per-address limits.
func anonymousLimits(hourly, burst int) models.RateLimits {
	if hourly <= 0 {
		hourly = defaultAnonymousHourly
	}
	if burst <= 0 {
		burst = min(defaultAnonymousBurst, hourly)
	}
	return models.RateLimits{Hourly: hourly, Burst: burst}
}

// exemptFromLimits are the unversioned operational paths (DECISIONS 8).
func exemptFromLimits(path string) bool {
	path = strings.ToLower(path) // as the router matches it
	switch {
	case path == "/healthz", path == "/readyz", strings.HasPrefix(path, "/openapi"), path == "/docs", strings.HasPrefix(path, "/docs/"):
		return true
	}
	return false
}

// provisioningPaths are the category collections whose POST starts provisioning.
var provisioningPaths = map[string]bool{
	"/services": true, "/services/provision": true, "/services/bulk/provision": true,
	"/services/connectivity/internet": true, "/services/connectivity/networks": true,
	"/services/voice/systems": true, "/services/voice/contact-centers": true,
	"/services/cloud/infrastructure": true, "/services/cloud/platforms": true,
	"/services/security/managed": true, "/services/security/infrastructure": true,
	"/services/ai/platforms": true,
	// An orchestration's steps provision services (provision_service).
	"/services/orchestration/workflows": true,
}

// retryPath matches POST /operations/{request_id}/retry, which starts the
// unfinished items of a bulk provisioning (or other bulk job) again: it
// counts as a call that starts provisioning.
func retryPath(p string) bool {
	rest, ok := strings.CutPrefix(p, "/operations/")
	id, ok2 := strings.CutSuffix(rest, "/retry")
	return ok && ok2 && id != "" && !strings.Contains(id, "/")
}

// EndpointGroup returns the endpoint group of a request (DECISIONS 8): large
// data exports, service provisioning, billing operations or account
// management; a request belongs to at most one, the most specific. Paths
// compare without regard to case, as the router matches them.
func EndpointGroup(method, path string) ratelimit.Group {
	p := strings.ToLower(strings.TrimSuffix(path, "/"))
	switch {
	case strings.HasPrefix(p, "/api/v1/"):
		p = p[len("/api/v1"):]
	case strings.HasPrefix(p, "/v1/"):
		p = p[len("/v1"):]
	default:
		return ratelimit.GroupNone
	}
	exports := strings.HasPrefix(p, "/billing/usage") || strings.HasPrefix(p, "/billing/cost-analysis") ||
		strings.HasPrefix(p, "/billing/analytics") || strings.HasPrefix(p, "/analytics/") || p == "/analytics" ||
		strings.HasPrefix(p, "/support/analytics") || strings.HasPrefix(p, "/support/reports") ||
		strings.HasPrefix(p, "/services/analytics") || (strings.HasPrefix(p, "/services/") && strings.HasSuffix(p, "/analytics")) ||
		p == "/events"
	switch {
	case exports && (method == http.MethodGet || strings.HasSuffix(p, "/reports") || strings.HasSuffix(p, "/generate") || strings.HasSuffix(p, "/run")):
		return ratelimit.GroupExports
	case method == http.MethodPost && (provisioningPaths[p] || retryPath(p)):
		return ratelimit.GroupProvisioning
	case strings.HasPrefix(p, "/billing/"):
		return ratelimit.GroupBilling
	case strings.HasPrefix(p, "/auth/"), p == "/organizations", strings.HasPrefix(p, "/organizations/"), p == "/users", strings.HasPrefix(p, "/users/"):
		return ratelimit.GroupAccount
	}
	return ratelimit.GroupNone
}

// limiterStats counts fail-open events for the metrics endpoint.
type limiterStats struct {
	failOpen    atomic.Int64
	lastFailLog atomic.Int64
}

// rateLimit applies the credential's (or the client IP's) limits in one
// round trip to Redis, sets the X-RateLimit-* headers on every answer,
// answers 429 when a bucket is empty, caps concurrent requests per
// organization (an event stream counts until it ends), and fails open when
// Redis is unreachable.
func (s *Server) rateLimit(c *fiber.Ctx) error {
	if s.limiter == nil || exemptFromLimits(c.Path()) {
		return s.afterAuthentication(c)
	}
	ctx := c.UserContext()
	p := models.PrincipalFrom(ctx)
	if err := authenticationError(c); p == nil && models.DatabaseUnavailable(err) {
		// The credential could not be checked because the database is
		// down: the answer is a 503, and the request is not spent from
		// the address's anonymous budget (an outage must not get every
		// client behind the address refused, then suspended, afterwards).
		return err
	}
	req := ratelimit.Request{Cost: ratelimit.Cost(c.Method()), Group: EndpointGroup(c.Method(), c.Path())}
	limits := s.anonymous
	switch client, clientLimits, ok := s.oauthClientBudget(c); {
	case p != nil:
		req.Key, req.OrgID, limits = "cred:"+p.ID, ratelimit.MonthlySubject(p.OrganizationID, string(p.Environment)), p.Limits
	case ok:
		req.Key, req.OrgID, limits = "cred:"+client.ID, ratelimit.MonthlySubject(client.OrganizationID, string(client.Environment)), clientLimits
	default:
		req.Key = "ip:" + callerIP(c.UserContext())
	}
	req.Hourly, req.Burst = limits.Hourly, limits.Burst
	if p != nil && limits.Concurrent > 0 && authenticationError(c) == nil && batchItemFrom(ctx) == nil {
		// The concurrency slot is taken in the same round trip as the check
		// (a batch's sub-requests run within the batch's slot).
		req.Slot = ratelimit.SlotRequest{Key: "conc:" + p.OrganizationID + ":" + string(p.Environment), Limit: limits.Concurrent}
	}
	// A GET of one service or operation reads its table's version in the
	// same round trip (never within a batch, whose transaction may hold
	// writes not yet told).
	table := ""
	if s.rowVersions && p != nil && batchItemFrom(ctx) == nil {
		if table = watchedTable(c.Method(), c.Path()); table != "" {
			req.Watch = []string{rowversion.Key(table)}
		}
	}
	res, err := s.limiter.Allow(ctx, req)
	s.countRateLimit(res, err)
	if err != nil {
		s.limiterFailedOpen(ctx, err)
		return s.afterAuthentication(c)
	}
	// Freed when the handler returns, fails or panics; an event stream takes
	// it over and frees it when the stream ends (see openStream).
	held := &heldSlot{slot: res.Slot}
	defer held.release()
	setRateLimitHeaders(c, res)
	s.noteSuspension(c, req.Key, p, res)
	if !res.Allowed {
		return rateLimitError(res)
	}
	if err := authenticationError(c); err != nil {
		return err
	}
	if res.SlotRefused {
		c.Set("X-RateLimit-Retry-After", "1") // as Retry-After: the slot, not a bucket, refused it
		return models.Errorf(models.CodeConcurrencyLimit, "too many requests in flight for this organization (limit %d); retry shortly", limits.Concurrent).
			WithDetail("limit", limits.Concurrent).WithDetail("retry_after", 1)
	}
	if res.Slot != nil {
		c.Locals(heldSlotKey{}, held)
	}
	if table != "" && len(res.Watched) == 1 {
		c.SetUserContext(context.WithValue(c.UserContext(), rowVersionKey{}, rowVersionValue{table: table, version: models.RowVersion{Value: res.Watched[0], Known: true}}))
	}
	return c.Next()
}

// noteSuspension logs, and records for account review, the suspension a
// check has just started (res.NewSuspension).
func (s *Server) noteSuspension(c *fiber.Ctx, key string, p *models.Principal, res ratelimit.Result) {
	if !res.NewSuspension {
		return
	}
	ctx := c.UserContext()
	s.log.Warn("credential suspended for excessive bursts", "credential", key, "until", res.SuspendedUntil, "ip", callerIP(ctx), "path", c.Path())
	if p != nil {
		if _, err := s.store.RecordSuspension(ctx, p, callerIP(ctx), c.Path(), res.SuspendedUntil); err != nil {
			s.log.Error("recording a suspension failed", "error", err)
		}
	}
}

// chargeMore spends units more from the calling credential's hourly and
// burst buckets, and one request from each of groups, for a request
// admitted at its method's cost whose full cost is known only once it has
// been read (a GraphQL query's computed cost and the endpoint groups it
// reads, docs/graphql.md), and sets the X-RateLimit-* headers to the
// buckets after the charge. It is not another request: the hourly and
// monthly request counts do not change. Limiter failures fail open, as in
// rateLimit. Errors: RATE_LIMIT_EXCEEDED (the charge that was refused
// spent nothing). It returns the units it charged (after the cap to the
// buckets' capacity; none when nothing was charged).
func (s *Server) chargeMore(c *fiber.Ctx, units int, groups ...ratelimit.Group) (int, error) {
	if s.limiter == nil || exemptFromLimits(c.Path()) {
		return 0, nil
	}
	units = max(units, 0)
	if len(groups) == 0 {
		if units == 0 {
			return 0, nil
		}
		groups = []ratelimit.Group{ratelimit.GroupNone}
	}
	ctx := c.UserContext()
	p := models.PrincipalFrom(ctx)
	if p == nil {
		return 0, nil
	}
	// With the method's cost already spent, the whole never exceeds a
	// bucket's capacity: any request can pass a full bucket.
	paid := ratelimit.Cost(c.Method())
	for _, capacity := range []int{p.Limits.Hourly, p.Limits.Burst} {
		if capacity > 0 {
			units = min(units, max(1, capacity-paid))
		}
	}
	// The units with the first group, the other groups alone.
	charged := 0
	for i, g := range groups {
		req := ratelimit.Request{Key: "cred:" + p.ID, OrgID: ratelimit.MonthlySubject(p.OrganizationID, string(p.Environment)), Hourly: p.Limits.Hourly, Burst: p.Limits.Burst, Group: g}
		if i == 0 {
			req.Cost = min(units, ratelimit.MaxChargeCost)
		}
		res, err := s.limiter.Charge(ctx, req)
		s.countRateLimit(res, err)
		if err != nil {
			s.limiterFailedOpen(ctx, err)
			return charged, nil
		}
		setRateLimitHeaders(c, res)
		s.noteSuspension(c, req.Key, p, res)
		if !res.Allowed {
			return charged, rateLimitError(res)
		}
		charged += req.Cost
	}
	return charged, nil
}

// oauthClientBudget returns the OAuth client that authenticates with its
// secret (HTTP Basic or client_id and client_secret in the form) on a POST
// to an OAuth client endpoint, with its organization's limits: such requests
// count against the client, not against the address's anonymous budget.
// Anything else (no or wrong credentials, public clients, an oversized
// body, refused before it is read) is false; the other early refusals (an
// unsupported API-Version) count against the client too.
func (s *Server) oauthClientBudget(c *fiber.Ctx) (*identity.OAuthClient, models.RateLimits, bool) {
	if c.Method() != fiber.MethodPost || !oauthClientEndpoints[c.Path()] || models.ErrorCode(earlyRefusal(c)) == models.CodePayloadTooLarge {
		return nil, models.RateLimits{}, false
	}
	id, secret := c.FormValue("client_id"), c.FormValue("client_secret")
	if scheme, creds, ok := strings.Cut(c.Get(fiber.HeaderAuthorization), " "); ok && strings.EqualFold(scheme, "Basic") {
		raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(creds))
		if err != nil {
			return nil, models.RateLimits{}, false
		}
		rawID, rawSecret, _ := strings.Cut(string(raw), ":")
		if id, err = url.QueryUnescape(rawID); err != nil {
			return nil, models.RateLimits{}, false
		}
		if secret, err = url.QueryUnescape(rawSecret); err != nil {
			return nil, models.RateLimits{}, false
		}
	}
	if id == "" || secret == "" {
		return nil, models.RateLimits{}, false
	}
	client, limits, err := s.identity.ClientRateLimits(c.UserContext(), id, secret)
	if err != nil {
		return nil, models.RateLimits{}, false
	}
	return client, limits, true
}

// countAnonymously spends the request from the caller address's anonymous
// budget and sets the X-RateLimit-* headers, for answers given before the
// middleware ran (a body above the server's ceiling). Limiter failures are
// ignored: the answer is an error anyway.
func (s *Server) countAnonymously(c *fiber.Ctx) {
	if s.limiter == nil || exemptFromLimits(c.Path()) {
		return
	}
	ctx := c.UserContext()
	req := ratelimit.Request{Cost: ratelimit.Cost(c.Method()), Key: "ip:" + callerIP(ctx), Hourly: s.anonymous.Hourly, Burst: s.anonymous.Burst}
	res, err := s.limiter.Allow(ctx, req)
	if err != nil {
		s.limiterFailedOpen(ctx, err)
		return
	}
	setRateLimitHeaders(c, res)
}

func setRateLimitHeaders(c *fiber.Ctx, r ratelimit.Result) {
	if r.Limit > 0 {
		c.Set("X-RateLimit-Limit", strconv.Itoa(r.Limit))
		c.Set("X-RateLimit-Remaining", strconv.Itoa(r.Remaining))
		c.Set("X-RateLimit-Reset", strconv.FormatInt(r.Reset, 10))
	}
	if r.Burst > 0 {
		c.Set("X-RateLimit-Burst", strconv.Itoa(r.Burst))
		c.Set("X-RateLimit-Burst-Remaining", strconv.Itoa(r.BurstRemaining))
	}
	c.Set("X-RateLimit-Retry-After", strconv.FormatInt(r.RetryAfterSeconds(), 10))
}

func rateLimitError(r ratelimit.Result) error {
	retry := r.RetryAfterSeconds()
	// limit, remaining, reset_time and current_usage (limit - remaining)
	// describe the bucket that refused: the burst bucket (also for a
	// suspension, which bursts caused; reset_time is then its end), the
	// endpoint group's (requests), or the hourly plan bucket (cost units).
	b := r.Hourly
	switch r.RejectedBy {
	case ratelimit.BucketBurst, ratelimit.BucketSuspended:
		b = r.BurstBucket
	case ratelimit.BucketGroup:
		b = r.GroupBucket
	}
	limit, remaining, reset := b.Limit, b.Remaining, time.Unix(b.Reset, 0)
	if !r.SuspendedUntil.IsZero() {
		reset = r.SuspendedUntil
	}
	usage := int64(max(limit-remaining, 0))
	e := models.Errorf(models.CodeRateLimitExceeded, "rate limit exceeded (%s); retry after %d seconds", r.RejectedBy, retry).
		WithDetail("limit", limit).WithDetail("remaining", remaining).
		WithDetail("reset_time", reset.UTC().Format(time.RFC3339)).
		WithDetail("retry_after", retry).WithDetail("current_usage", usage).WithDetail("bucket", string(r.RejectedBy))
	if !r.SuspendedUntil.IsZero() {
		e.Message = "this credential is suspended for 5 minutes after repeated burst violations"
		e.WithDetail("suspended_until", r.SuspendedUntil.UTC().Format(time.RFC3339))
	}
	return e
}

// limiterFailedOpen counts the event and logs it at most once a minute.
func (s *Server) limiterFailedOpen(ctx context.Context, err error) {
	s.limits.failOpen.Add(1)
	now := s.now().Unix()
	last := s.limits.lastFailLog.Load()
	if now-last >= 60 && s.limits.lastFailLog.CompareAndSwap(last, now) {
		level := "redis unavailable: rate limits fail open"
		if !errors.Is(err, ratelimit.ErrUnavailable) {
			level = "rate limiter error: failing open"
		}
		s.log.WarnContext(ctx, level, "error", err, "fail_open_total", s.limits.failOpen.Load())
	}
}

// RateLimitUsage is the answer of GET /monitoring/rate-limits.
type RateLimitUsage struct {
	Body struct {
		Envelope
		CurrentUsage struct {
			RequestsThisHour int64 `json:"requests_this_hour" doc:"Requests admitted this hour (a count of requests, not cost units)"`
			UnitsThisHour    int64 `json:"units_this_hour" doc:"Cost units spent this hour (GET 1, POST and PUT 2, DELETE 3)"`
			HourlyLimitUnits *int  `json:"hourly_limit_units" nullable:"true" doc:"Hourly limit in cost units; null when unlimited"`
			HourlyLimit      int   `json:"hourly_limit" doc:"Deprecated: hourly_limit_units (0 when unlimited)"`
			BurstUsed        int   `json:"burst_used" doc:"Cost units used in the burst window"`
			BurstLimit       int   `json:"burst_limit" doc:"Burst limit in cost units per 60 s (0 when unlimited)"`
		} `json:"current_usage"`
		UsageHistory   []UsageHour `json:"usage_history"`
		ProjectedUsage struct {
			EndOfHour int64  `json:"end_of_hour"`
			RiskLevel string `json:"risk_level" enum:"low,medium,high,critical"`
		} `json:"projected_usage"`
		MonthlyUsage MonthlyUsage `json:"monthly_usage"`
	}
}

// UsageHour is one hour of a credential's use.
type UsageHour struct {
	Hour       string  `json:"hour"`
	Requests   int64   `json:"requests" doc:"Requests admitted in the hour"`
	Units      int64   `json:"units" doc:"Cost units spent in the hour"`
	Percentage float64 `json:"percentage" doc:"Units as a percentage of the hourly limit (0 when unlimited)"`
}

// MonthlyUsage is the organization's API use this calendar month, for overage billing.
type MonthlyUsage struct {
	Month                string       `json:"month" example:"2026-11"`
	Requests             int64        `json:"requests"`
	CostUnits            int64        `json:"cost_units"`
	Included             int64        `json:"included" doc:"Requests included in the plan (0 = custom)"`
	OverageRequests      int64        `json:"overage_requests"`
	EstimatedOverageCost models.Money `json:"estimated_overage_cost" doc:"USD, charged on the next invoice"`
}

// SuspensionItem is one recorded suspension.
type SuspensionItem struct {
	ID             string `json:"id"`
	OrganizationID string `json:"organization_id"`
	CredentialID   string `json:"credential_id"`
	ClientIP       string `json:"client_ip"`
	Path           string `json:"path"`
	SuspendedUntil string `json:"suspended_until"`
	CreatedAt      string `json:"created_at"`
}

// SuspensionsOutput is a page of suspensions.
type SuspensionsOutput struct {
	Body struct {
		Envelope
		Suspensions []SuspensionItem `json:"suspensions"`
		Pagination  Pagination       `json:"pagination"`
	}
}

// RiskLevel classifies a projected hourly use against the limit.
func RiskLevel(projected int64, limit int) string {
	if limit <= 0 {
		return "low"
	}
	ratio := float64(projected) / float64(limit)
	switch {
	case ratio >= 1:
		return "critical"
	case ratio >= 0.8:
		return "high"
	case ratio >= 0.5:
		return "medium"
	}
	return "low"
}

func (s *Server) registerRateLimits() {
	tags := []string{"Monitoring"}
	register(s, huma.Operation{OperationID: "get-rate-limit-usage", Method: http.MethodGet, Path: "/monitoring/rate-limits", Summary: "Rate-limit usage of the calling credential", Tags: tags,
		Description: "Current use of the hourly and burst buckets, requests per hour for the last 24 hours, and the projected use at the end of the hour, computed from the counters in Redis."},
		access{}, func(ctx context.Context, _ *struct{}) (*RateLimitUsage, error) {
			if s.limiter == nil {
				return nil, models.Errorf(models.CodeDependencyUnavailable, "rate limiting is not configured")
			}
			p := principal(ctx)
			key := "cred:" + p.ID
			cur, err := s.limiter.CurrentUsage(ctx, key, p.Limits.Hourly, p.Limits.Burst)
			if err != nil {
				return nil, models.Errorf(models.CodeDependencyUnavailable, "rate-limit counters are unavailable; retry shortly").WithDetail("retry_after", 5)
			}
			hist, err := s.limiter.HourlyHistory(ctx, key, s.now(), 24)
			if err != nil {
				return nil, models.Errorf(models.CodeDependencyUnavailable, "rate-limit counters are unavailable; retry shortly").WithDetail("retry_after", 5)
			}
			out := &RateLimitUsage{}
			b := &out.Body
			b.CurrentUsage.RequestsThisHour, b.CurrentUsage.UnitsThisHour, b.CurrentUsage.HourlyLimit = cur.HourRequests, cur.HourUnits, p.Limits.Hourly
			if p.Limits.Hourly > 0 {
				limit := p.Limits.Hourly
				b.CurrentUsage.HourlyLimitUnits = &limit
			}
			b.CurrentUsage.BurstUsed, b.CurrentUsage.BurstLimit = cur.BurstUsed(), p.Limits.Burst
			b.UsageHistory = []UsageHour{}
			for _, h := range hist {
				pct := 0.0
				if p.Limits.Hourly > 0 {
					pct = float64(h.Units) * 100 / float64(p.Limits.Hourly)
				}
				b.UsageHistory = append(b.UsageHistory, UsageHour{Hour: models.Timestamp(h.Hour), Requests: h.Requests, Units: h.Units, Percentage: float64(int(pct*100)) / 100})
			}
			now := cur.Now
			if now.IsZero() {
				now = s.now()
			}
			elapsed := now.Sub(now.Truncate(time.Hour))
			projected := cur.HourUnits
			if elapsed >= time.Minute {
				projected = int64(float64(cur.HourUnits) * float64(time.Hour) / float64(elapsed))
			}
			b.ProjectedUsage.EndOfHour = projected
			b.ProjectedUsage.RiskLevel = RiskLevel(projected, p.Limits.Hourly)
			reqs, units, err := s.limiter.MonthlyUsage(ctx, ratelimit.MonthlySubject(p.OrganizationID, string(p.Environment)), now)
			if err != nil {
				return nil, models.Errorf(models.CodeDependencyUnavailable, "rate-limit counters are unavailable; retry shortly").WithDetail("retry_after", 5)
			}
			org, err := s.identity.GetOrganization(ctx, p, p.OrganizationID)
			if err != nil {
				return nil, err
			}
			limits := org.Limits()
			b.MonthlyUsage = MonthlyUsage{Month: now.UTC().Format("2006-01"), Requests: reqs, CostUnits: units, Included: limits.MonthlyIncluded,
				OverageRequests: max(0, reqs-limits.MonthlyIncluded), EstimatedOverageCost: models.Money(limits.OverageCharge(reqs) / 10_000)}
			if limits.MonthlyIncluded == 0 {
				b.MonthlyUsage.OverageRequests = 0
			}
			return out, nil
		})
	register(s, huma.Operation{OperationID: "list-rate-limit-suspensions", Method: http.MethodGet, Path: "/monitoring/rate-limit-suspensions", Summary: "Suspensions for account review", Tags: tags,
		Description: "Credentials suspended for repeated burst violations. Provider staff see every tenant."},
		access{permission: "auth:manage"}, func(ctx context.Context, in *struct {
			ListParams
			CredentialID string `query:"credential_id" maxLength:"64"`
		}) (*SuspensionsOutput, error) {
			pr, err := in.page()
			if err != nil {
				return nil, err
			}
			rows, total, err := s.store.ListSuspensions(ctx, principal(ctx), in.CredentialID, pr)
			if err != nil {
				return nil, err
			}
			out := &SuspensionsOutput{}
			out.Body.Suspensions = mapSlice(rows, func(r *models.RateLimitSuspension) SuspensionItem {
				return SuspensionItem{ID: r.ID, OrganizationID: r.OrganizationID, CredentialID: r.CredentialID, ClientIP: r.ClientIP, Path: r.Path,
					SuspendedUntil: models.Timestamp(r.SuspendedUntil), CreatedAt: models.Timestamp(r.CreatedAt)}
			})
			out.Body.Pagination = newPagination(pr, total)
			return out, nil
		})
}
