// Package api is the platform's HTTP interface: a Fiber app with huma
// operations, mounted under /v1 and /api/v1, with the conventions of
// docs/api.md (errors, metadata, versioning, ETags, idempotency, pagination).
package api

import (
	"context"
	"crypto/x509"
	"errors"
	"log/slog"
	"net/http"
	"net/netip"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humafiber"
	"github.com/gofiber/fiber/v2"
	"github.com/redis/go-redis/v9"
	"github.com/valyala/fasthttp"
	"go.temporal.io/sdk/client"
	"gocloud.dev/blob"

	"github.com/telcoplatform/platform/api/internal/inproc"
	"github.com/telcoplatform/platform/api/portal"
	"github.com/telcoplatform/platform/auth"
	"github.com/telcoplatform/platform/config"
	"github.com/telcoplatform/platform/metrics"
	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/analytics/reports"
	"github.com/telcoplatform/platform/models/automation"
	"github.com/telcoplatform/platform/models/billing"
	"github.com/telcoplatform/platform/models/catalog"
	"github.com/telcoplatform/platform/models/eventlog"
	"github.com/telcoplatform/platform/models/identity"
	"github.com/telcoplatform/platform/models/operations"
	"github.com/telcoplatform/platform/models/quotes"
	"github.com/telcoplatform/platform/models/services"
	"github.com/telcoplatform/platform/models/support"
	"github.com/telcoplatform/platform/models/telemetry"
	"github.com/telcoplatform/platform/ratelimit"
	"github.com/telcoplatform/platform/tracing"
)

// Body size limits: JSON bodies 1 MiB on every route; bodies with inline
// attachments up to 15 MiB on the operations registered with that
// MaxBodyBytes (see limitBody). The server-wide ceiling only bounds what is
// read before a route's own limit applies.
const (
	MaxJSONBody       = 1 << 20
	MaxAttachmentBody = 15 << 20
)

// MaxHeaderBytes bounds a request's line (method and URL) and headers
// together: a request above it is answered 400 VALIDATION_ERROR (see
// fiberErrorHandler) before any middleware runs. It is Fiber's read buffer.
const MaxHeaderBytes = 4096

// Deps are the server's collaborators, passed in by main.
type Deps struct {
	Config   config.Config
	Store    *models.Store
	Temporal client.Client         // may be nil in handler tests
	Redis    redis.UniversalClient // may be nil in handler tests
	Limiter  *ratelimit.Limiter    // nil: no rate limiting (handler tests)
	Logger   *slog.Logger
	Now      func() time.Time
	Streams  StreamOptions // event streams: credential re-check interval and per-tenant cap
	// Blobs is the blob store of the support area's attachments (BLOB_URL;
	// nil: attachments are refused with 503 DEPENDENCY_UNAVAILABLE).
	Blobs *blob.Bucket
	// Keys caches authenticated API keys (nil: a cache of
	// identity.DefaultKeyCacheTTL). A request that may write to credentials,
	// permissions, plans or policies empties it (see dropCachedKeys).
	Keys *identity.KeyCache
	// Metrics records the API's metrics (nil: none; see package metrics).
	Metrics *metrics.Metrics
	// Tracing traces requests, and the outgoing HTTP of integration tests
	// (nil or off: no tracing middleware at all; see api/tracing.go).
	Tracing *tracing.Provider
	// RowVersions says that every process writing the database tells its
	// commits to Redis (package rowversion): GET /v1/services/{id} and
	// GET /v1/operations/{id} then read their table's version in the
	// rate-limit check and answer an unchanged row from memory without
	// reading it. False (or no Limiter): the row is read on every GET.
	RowVersions bool
}

// Server is the HTTP API: the Fiber app and the huma API on it.
type Server struct {
	App        *fiber.App
	fixedPaths map[string][]string // fixed route paths to their methods (fixedPathGuard)
	API        huma.API
	cfg        config.Config
	store      *models.Store
	automation *automation.Store // bulk operations and orchestrations
	support    *support.Store    // the support area's domain, on store
	// analyticsReports is the report builder: definitions, runs, files.
	analyticsReports *reports.Store
	quotes           *quotes.Store     // quotes: priced offers ordered item by item
	telemetry        *telemetry.Store  // telemetry, uptime, incidents, performance
	operations       *operations.Store // long-running operations
	eventlog         *eventlog.Store   // the event log, webhook subscriptions and deliveries, the notification outbox
	identity         *identity.Store   // organizations, users, keys, OAuth, MFA, SAML, certificates, audit
	catalog          *catalog.Store    // the catalog, templates, locations and inventory
	services         *services.Store   // orders of the nine kinds, services and their changes, pricing
	billing          *billing.Store    // accounts, invoices, payments, subscriptions, usage, budgets
	temporal         client.Client
	redis            redis.UniversalClient
	log              *slog.Logger
	metrics          *metrics.Metrics  // nil: nothing recorded
	tracing          *tracing.Provider // nil or off: nothing traced
	now              func() time.Time
	keyUsage         *identity.KeyUsage
	keys             *identity.KeyCache // authenticated API keys, for a second (see dropCachedKeys)
	limiter          *ratelimit.Limiter
	limits           limiterStats
	// anonymous are the per-address limits of requests without a valid
	// credential (ANONYMOUS_HOURLY_LIMIT, ANONYMOUS_BURST_LIMIT).
	anonymous models.RateLimits
	v1        *huma.Group
	tokens    *auth.Tokens // access tokens (JWT) and their signing keys
	replays   *replayGuard // request signatures already accepted
	streams   StreamOptions
	// openStreams counts open event streams when the limiter cannot.
	openStreams *localStreams
	hub         *streamHub // the real-time streams' reader of the event log
	// life is the server's context: cancelled (cause errShutdown) when the
	// server shuts down, it ends the open event streams and the hub.
	life        context.Context
	endLife     context.CancelCauseFunc
	spentTokens *usedStreamTokens // stream tokens used, when Redis cannot tell
	// trustedProxies are TRUSTED_PROXIES, parsed once (see clientIP).
	trustedProxies []netip.Prefix
	// clientCAs are CLIENT_CA_FILE's CAs: registered and forwarded client
	// certificates must chain to them (nil: mutual TLS is off).
	clientCAs *x509.CertPool
	// largeBodies are the routes registered with a body limit above
	// MaxJSONBody (attachments); filled while registering, read-only after New.
	largeBodies []largeBodyRoute
	// catalogAnswer is GET /v1/services/catalog's answer, kept for a second.
	catalogAnswer *catalogCache
	// serviceAnswers and operationAnswers are the answers of GET
	// /v1/services/{id} and GET /v1/operations/{id}, per row snapshot.
	serviceAnswers   *rowAnswers[services.Service, ServiceItem]
	operationAnswers *rowAnswers[operations.Operation, OperationDocument]
	rowVersions      bool               // see Deps.RowVersions
	routes           routeIndex         // route templates, for the metrics of requests refused before routing
	drain            drainState         // set by Run on shutdown: /readyz 503, then new requests 503
	inProcess        *inproc.Dispatcher // the app in process: the sub-requests of batches, the portal's API calls
	portal           *portal.Portal     // the portal's pages (api/portal)
}

// access is what an operation requires of its caller, declared once per route.
type access struct {
	public     bool   // no credential needed
	permission string // e.g. "services:read"; "" with admin for admin-only routes
	admin      bool   // provider administrators only
	staff      bool   // provider staff (agents and administrators) only
	// sensitive marks operations that need extra verification (spec 5.1:
	// payments and payment-method changes): the hook where the identity
	// area's MFA challenge is enforced for user principals (DECISIONS 7).
	sensitive bool
	mfa       bool // challenge users with TOTP enrolled (DECISIONS 7); see api/mfa.go
}

const accessKey = "platform.access"

// New builds the server with every route registered.
func New(deps Deps) *Server {
	s := &Server{
		cfg: deps.Config, store: deps.Store, temporal: deps.Temporal, redis: deps.Redis,
		log: deps.Logger, now: deps.Now, limiter: deps.Limiter, rowVersions: deps.RowVersions && deps.Limiter != nil,
		streams: deps.Streams.withDefaults(), openStreams: &localStreams{open: map[string]int{}},
		keys: deps.Keys, metrics: deps.Metrics, catalogAnswer: newCatalogCache(catalogCacheTTL), tracing: deps.Tracing,
		serviceAnswers:   newRowAnswers[services.Service, ServiceItem](),
		operationAnswers: newRowAnswers[operations.Operation, OperationDocument](),
	}
	if s.keys == nil {
		s.keys = identity.NewKeyCache(identity.DefaultKeyCacheTTL)
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.now == nil {
		s.now = func() time.Time { return time.Now().UTC() }
	}
	s.support = support.NewStore(s.store, support.WithBlobs(deps.Blobs))
	s.analyticsReports = reports.NewStore(s.store, deps.Blobs)
	s.catalog = catalog.NewStore(s.store)
	s.services = services.NewStore(s.store)
	s.billing = billing.NewStore(s.store)
	s.automation = automation.NewStore(s.store)
	s.quotes = quotes.NewStore(s.store)
	s.telemetry = telemetry.NewStore(s.store)
	s.operations = operations.NewStore(s.store)
	s.eventlog = eventlog.NewStore(s.store)
	s.life, s.endLife = context.WithCancelCause(context.Background())
	s.hub = newStreamHub(s.eventlog, s.redis, s.log, s.metrics, s.streams)
	s.spentTokens = &usedStreamTokens{seen: map[string]time.Time{}}
	s.identity = identity.NewStore(s.store)
	s.anonymous = anonymousLimits(deps.Config.AnonymousHourly, deps.Config.AnonymousBurst)
	s.keyUsage = identity.NewKeyUsage(s.identity)
	s.tokens = auth.NewTokens(s.store, deps.Config.PublicBaseURL, s.now)
	s.replays = newReplayGuard(s.redis, s.now)
	s.metrics.RegisterFailOpen(func() float64 { return float64(s.limits.failOpen.Load()) })

	for _, cidr := range deps.Config.TrustedProxies {
		if pfx, err := netip.ParsePrefix(cidr); err == nil { // config.Load has validated them
			s.trustedProxies = append(s.trustedProxies, pfx.Masked())
		}
	}
	s.App = fiber.New(fiber.Config{
		AppName:               "telco-platform",
		BodyLimit:             MaxAttachmentBody + 1<<20,
		ErrorHandler:          s.fiberErrorHandler,
		DisableStartupMessage: true,
		ReadTimeout:           60 * time.Second,
		WriteTimeout:          0, // Server-Sent Events stay open
		IdleTimeout:           120 * time.Second,
		ReadBufferSize:        MaxHeaderBytes,
		EnableIPValidation:    true,
		JSONEncoder:           jsonMarshal,
	})
	s.refuseUnknownMethods()
	s.inProcess = inproc.New(s.App)
	s.App.Use(inproc.Adopt) // first: an in-process request (a batch's item, the portal's call) starts from the context made for it
	if s.tracing.Enabled() {
		s.App.Use(s.traceMiddleware()) // outside observe, so the access log carries the trace id
	}
	s.App.Use(s.observe, s.recoverPanics, s.dropCachedKeys, s.requestContext, s.refuseWhileClosing, s.limitBody, s.authenticate, s.rateLimit, s.fixedPathGuard, s.conditionalGet)

	cfg := huma.DefaultConfig("Telecom & IT Services Platform API", LatestVersion)
	cfg.CreateHooks = nil
	cfg.OpenAPIPath = ""
	cfg.DocsPath = ""
	cfg.SchemasPath = ""
	cfg.Info.Description = "Discover, quote, provision, scale and decommission connectivity, voice, cloud, security and AI services; " +
		"billing, support, webhooks and authentication. Every path is listed under /v1 and is served under /api/v1 as well (the same operations). See docs/api.md for the conventions."
	cfg.Servers = []*huma.Server{{URL: deps.Config.PublicBaseURL}}
	cfg.Components.SecuritySchemes = map[string]*huma.SecurityScheme{
		"bearer": {Type: "http", Scheme: "bearer", Description: "API key (sk_live_... / sk_test_...) or OAuth 2.0 access token"},
		"apiKey": {Type: "apiKey", In: "header", Name: "X-API-Key", Description: "API key"},
	}
	cfg.Transformers = []huma.Transformer{s.envelopeTransformer}
	cfg.Formats = map[string]huma.Format{"application/json": jsonFormat(), "json": jsonFormat()}
	cfg.Components.Schemas.RegisterTypeAlias(reflect.TypeFor[models.Money](), reflect.TypeFor[float64]()) // 2-decimal amounts
	s.API = humafiber.New(s.App, cfg)
	// A stored answer is replayed only to an authorised caller. The body
	// checks run before the Idempotency-Key is taken: their refusals (a
	// missing Content-Type, a body that is not UTF-8) are not stored, so a
	// corrected retry with the same key and body is processed.
	s.API.UseMiddleware(s.authorize, s.checkBody, s.idempotent)
	s.v1 = huma.NewGroup(s.API, "/v1", "/api/v1")
	// One mount in the OpenAPI document and the explorer: /api/v1 serves the
	// same operations (its copies are routed, not documented), and
	// operations keep their own ids and tags.
	s.v1.UseModifier(func(o *huma.Operation, next func(*huma.Operation)) {
		o.Tags = slices.DeleteFunc(slices.Clone(o.Tags), func(t string) bool { return t == "v1" || t == "api-v1" })
		if id, ok := strings.CutPrefix(o.OperationID, "api-v1-"); ok {
			o.OperationID, o.Hidden = id, true
		} else {
			o.OperationID = strings.TrimPrefix(o.OperationID, "v1-")
		}
		next(o)
	})

	s.registerHealth()
	s.registerDocs()
	s.registerCatalog()
	// Fixed /services/bulk/... and /services/orchestration/... paths: before /services/{service_id}.
	s.registerBulk()
	s.registerOrchestration()
	s.publishDomainSchemas()
	s.registerAvailability() // fixed /services/... paths before /services/{service_id}
	s.registerProvisioning() // fixed /services/... paths before /services/{service_id}
	s.registerQuotes()       // fixed /services/quotes/... before /services/{service_id}
	s.registerCategories()   // fixed /services/<category>/... before /services/{service_id}
	s.registerOperations()   // raw SSE routes before their huma operations
	s.registerWebhooks()     // fixed /services/webhooks before /services/{service_id}
	s.registerEvents()       // /events/...
	s.registerStream()       // /stream: the raw route before its huma operation
	s.registerServices()     // /services/{service_id}: after every fixed /services/... path
	s.registerOrganizations()
	s.registerAccounts()
	s.registerUsers()
	s.registerAPIKeys()
	s.registerRateLimits()
	s.registerIdentity() // /.well-known/*, /oauth/*, /auth/clients
	s.registerMFA()
	s.registerCertificates()
	s.registerSAML()
	s.registerPortal()
	s.registerAudit()
	s.registerInvoices()
	s.registerSLACredits()
	s.registerPayments()
	s.registerUsage()
	s.registerBudgets()
	s.registerSubscriptions()
	s.registerAnalytics()
	s.registerAnalyticsReports()
	s.registerSupport()
	s.registerBatch()
	s.registerGraphQL()
	s.documentErrors()
	s.fixedPaths = fixedPathMethods(s.App.GetRoutes(true))
	return s
}

// Run serves until ctx ends, flushing key usage in the background, then
// drains (see drainState: /readyz answers 503 while requests are still
// served for SHUTDOWN_DRAIN_DELAY) and shuts down gracefully within
// SHUTDOWN_TIMEOUT: the listener closes, open event streams end (reason
// shutdown: see EndStreams), requests in flight finish.
func (s *Server) Run(ctx context.Context) error {
	usageCtx, stopUsage := context.WithCancel(context.WithoutCancel(ctx))
	usageDone := make(chan struct{})
	go func() { s.keyUsage.Run(usageCtx, 10*time.Second); close(usageDone) }()
	errc := make(chan error, 1)
	go func() { errc <- s.App.Listen(s.cfg.HTTPAddr) }()
	var err error
	select {
	case err = <-errc:
	case <-ctx.Done():
		err = s.shutdown(errc)
	}
	stopUsage()
	<-usageDone
	return err
}

// shutdown drains, then stops the listener errc reports on.
func (s *Server) shutdown(errc <-chan error) error {
	s.drain.draining.Store(true)
	if d := s.cfg.ShutdownDrainDelay; d > 0 {
		s.log.Info("draining: /readyz answers 503, requests are still served", "for", d.String())
		select {
		case <-time.After(d):
		case err := <-errc:
			return err
		}
	}
	s.drain.closing.Store(true)
	s.log.Info("shutting down: the listener closes, event streams end, requests in flight finish", "within", s.cfg.ShutdownTimeout.String())
	s.EndStreams()
	return s.App.ShutdownWithTimeout(s.cfg.ShutdownTimeout)
}

// errShutdown is the cause of the server's context at shutdown.
var errShutdown = errors.New("the server is shutting down")

// EndStreams ends the open event streams (real-time and operations'),
// each with its reason `shutdown` (Server-Sent Events: a last `error`
// event with SERVICE_MAINTENANCE and details.reason "shutdown"; WebSocket:
// close code 1001), and stops the real-time streams' reader of the event
// log. Run calls it when it shuts down; the server serves no stream after.
func (s *Server) EndStreams() { s.endLife(errShutdown) }

// shuttingDown reports whether ctx ended because the server shuts down.
func shuttingDown(ctx context.Context) bool { return errors.Is(context.Cause(ctx), errShutdown) }

// shutdownError is what a stream ended by the shutdown tells its client.
func shutdownError() *models.Error {
	return models.Errorf(models.CodeServiceMaintenance, "shutdown: the server is stopping; reconnect with the last event id").WithDetail("reason", "shutdown")
}

// FlushUsage writes pending API-key usage counts (tests and shutdown).
func (s *Server) FlushUsage(ctx context.Context) error { return s.keyUsage.Flush(ctx) }

// register adds an operation under /v1 and /api/v1 with its access rule.
func register[I, O any](s *Server, op huma.Operation, a access, h func(context.Context, *I) (*O, error)) {
	if op.Metadata == nil {
		op.Metadata = map[string]any{}
	}
	op.Metadata[accessKey] = a
	describeAccess(&op, a)
	if op.MaxBodyBytes == 0 {
		op.MaxBodyBytes = MaxJSONBody
	}
	if op.MaxBodyBytes > MaxJSONBody {
		s.allowLargeBody(op.Method, op.Path, op.MaxBodyBytes)
	}
	huma.Register(s.v1, op, h)
}

// describeAccess states in op's description (and its security
// requirements) what the access rule a requires, so that /openapi.json
// tells every operation's access: public, or the credential, permission,
// staff role and second factor it needs.
func describeAccess(op *huma.Operation, a access) {
	if a.public {
		op.Description = strings.TrimSpace(op.Description + "\n\nPublic: needs no credential.")
		return
	}
	op.Security = []map[string][]string{{"bearer": {}}, {"apiKey": {}}}
	desc := "Requires a credential"
	if a.permission != "" {
		desc += " with permission `" + a.permission + "`"
	}
	if a.admin {
		desc += "; provider administrators only"
	} else if a.staff {
		desc += "; provider staff only"
	}
	if needsMFA(a) {
		desc += "; users with a second factor are challenged (401 mfa_required, then X-MFA-Challenge-Id)"
	}
	op.Description = strings.TrimSpace(op.Description + "\n\n" + desc + ".")
}

// registerRoot adds an unversioned operation (health, discovery).
func registerRoot[I, O any](s *Server, op huma.Operation, a access, h func(context.Context, *I) (*O, error)) {
	if op.Metadata == nil {
		op.Metadata = map[string]any{}
	}
	op.Metadata[accessKey] = a
	describeAccess(&op, a)
	huma.Register(s.API, op, h)
}

// authorize enforces each operation's declared access: UNAUTHENTICATED
// without a credential, INSUFFICIENT_PERMISSIONS without the permission.
func (s *Server) authorize(ctx huma.Context, next func(huma.Context)) {
	a, ok := ctx.Operation().Metadata[accessKey].(access)
	if !ok {
		huma.WriteErr(s.API, ctx, 0, "", models.Internal(nil).WithDetail("reason", "operation without an access rule"))
		return
	}
	if a.public {
		next(ctx)
		return
	}
	p := models.PrincipalFrom(ctx.Context())
	if p == nil {
		huma.WriteErr(s.API, ctx, 0, "", models.Errorf(models.CodeUnauthenticated, "this endpoint needs a credential: send Authorization: Bearer <API key> or X-API-Key"))
		return
	}
	if a.admin && !p.IsAdmin() {
		huma.WriteErr(s.API, ctx, 0, "", models.Errorf(models.CodeInsufficientPermissions, "this endpoint is for provider administrators"))
		return
	}
	if a.staff && !p.IsStaff() {
		huma.WriteErr(s.API, ctx, 0, "", models.Errorf(models.CodeInsufficientPermissions, "this endpoint is for provider staff"))
		return
	}
	if a.permission != "" && !p.Can(a.permission) {
		huma.WriteErr(s.API, ctx, 0, "", models.Errorf(models.CodeInsufficientPermissions, "this endpoint needs permission %s", a.permission).WithDetail("required_permission", a.permission))
		return
	}
	if !s.mfaChallenge(ctx, a, p) {
		return
	}
	next(ctx)
}

// refuseUnknownMethods answers a request whose method Fiber does not know
// (curl -X FOO) as the error handler answers a known method a path does not
// have: 405 METHOD_NOT_ALLOWED with Allow, or 404 NOT_FOUND where no route
// has the path, in the error shape and with the headers of every answer.
// (Fiber itself answers such a request a plain-text 400 before any
// middleware runs.)
func (s *Server) refuseUnknownMethods() {
	known := s.App.Config().RequestMethods
	srv := s.App.Server()
	serve := srv.Handler
	srv.Handler = func(rctx *fasthttp.RequestCtx) {
		for _, m := range known {
			if string(rctx.Method()) == m {
				serve(rctx)
				return
			}
		}
		c := s.App.AcquireCtx(rctx)
		defer s.App.ReleaseCtx(c)
		if err := s.fiberErrorHandler(c, fiber.ErrMethodNotAllowed); err != nil {
			s.log.Error("answering an unknown method failed", "error", err)
		}
	}
}

// principal returns the caller of an authorised operation.
func principal(ctx context.Context) *models.Principal { return models.PrincipalFrom(ctx) }

// allowedMethods lists the methods registered for a path (for 405 Allow).
func (s *Server) allowedMethods(path string) []string {
	seen := map[string]bool{}
	var out []string
	for _, r := range s.App.GetRoutes(true) {
		if r.Method == http.MethodHead || r.Method == http.MethodOptions || seen[r.Method] {
			continue
		}
		if routeMatches(r.Path, path) {
			seen[r.Method] = true
			out = append(out, r.Method)
		}
	}
	return withHead(out)
}

// routeMatches reports whether path is one of the Fiber route pattern's,
// as the router matches it: fixed segments in any letter case, with or
// without a trailing slash.
func routeMatches(pattern, path string) bool {
	ps := strings.Split(strings.Trim(pattern, "/"), "/")
	xs := strings.Split(strings.Trim(path, "/"), "/")
	if len(ps) != len(xs) {
		return false
	}
	for i := range ps {
		if strings.HasPrefix(ps[i], ":") {
			continue
		}
		if !strings.EqualFold(ps[i], xs[i]) {
			return false
		}
	}
	return true
}
