// Command platform runs the telecom & IT services platform: the HTTP API, the
// Temporal worker, or both, plus migration, seeding and key administration.
//
//	platform serve        the HTTP API
//	platform worker       the Temporal worker (workflows and activities)
//	platform dev          API and worker in one process (embedded defaults)
//	platform migrate      bring the database schema up to date
//	platform seed         load reference data and the demo tenant (with sandbox demo data)
//	platform keys create  issue an API key from the command line
//	platform config       list every configuration variable
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/redis/go-redis/v9"
	"go.temporal.io/sdk/client"
	"golang.org/x/sync/errgroup"
	"gorm.io/gorm"

	"github.com/telcoplatform/platform/activities"
	"github.com/telcoplatform/platform/api"
	"github.com/telcoplatform/platform/blobstore"
	"github.com/telcoplatform/platform/config"
	"github.com/telcoplatform/platform/events"
	"github.com/telcoplatform/platform/logging"
	"github.com/telcoplatform/platform/metrics"
	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/eventlog"
	"github.com/telcoplatform/platform/models/identity"
	"github.com/telcoplatform/platform/models/migrate"
	"github.com/telcoplatform/platform/models/rekey"
	"github.com/telcoplatform/platform/models/seed"
	"github.com/telcoplatform/platform/models/support"
	"github.com/telcoplatform/platform/notify"
	"github.com/telcoplatform/platform/ratelimit"
	"github.com/telcoplatform/platform/redisconn"
	"github.com/telcoplatform/platform/rowversion"
	"github.com/telcoplatform/platform/simulator"
	"github.com/telcoplatform/platform/temporalclient"
	"github.com/telcoplatform/platform/tracing"
	"github.com/telcoplatform/platform/webhooks"
	"github.com/telcoplatform/platform/worker"
	"github.com/telcoplatform/platform/workflows"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "platform:", err)
		os.Exit(1)
	}
}

const usage = `usage: platform <command>

commands:
  serve        run the HTTP API
  worker       run the Temporal worker
  dev          run the API and the worker in one process
  migrate      bring the database schema up to date
  seed         load the catalog, reference data and the demo tenant, whose sandbox gets demo services, telemetry and invoices
  keys create  issue an API key (flags: -org, -env, -name, -permissions, -role)
  rekey        re-seal every stored secret under SECRETS_KEY (after a key rotation)
  signing-keys list, rotate or retire KID: the access tokens' signing keys
  healthcheck  ask a loopback health address (http://127.0.0.1:PORT/readyz); fails unless 200
  config       list every configuration variable with its default
`

func run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stdout, usage)
		return errors.New("no command given")
	}
	switch args[0] {
	case "help", "-h", "--help", "-help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	if args[0] == "healthcheck" {
		return healthcheckCommand(ctx, args[1:], stdout)
	}
	if args[0] == "config" {
		w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(w, "VARIABLE\tDEFAULT\tMEANING")
		for _, v := range config.Variables() {
			fmt.Fprintf(w, "%s\t%s\t%s\n", v.Name, v.Default, v.Meaning)
		}
		return w.Flush()
	}
	cfg, err := config.Load(getenv)
	if err != nil {
		return err
	}
	log := newLogger(cfg)
	if args[0] == "serve" || args[0] == "worker" {
		if err := cfg.CheckMultiInstance(); err != nil {
			return err
		}
	}
	switch args[0] {
	case "migrate":
		db, err := openDB(ctx, cfg, log)
		if err != nil {
			return err
		}
		defer models.Close(db)
		log.Info("database schema is up to date")
		return nil
	case "seed":
		store, closeDB, err := openStore(ctx, cfg, log)
		if err != nil {
			return err
		}
		defer closeDB()
		res, err := seed.NewStore(store).Seed(ctx)
		if err != nil {
			return fmt.Errorf("seed: %w", err)
		}
		if err := support.NewStore(store).Seed(ctx); err != nil {
			return err
		}
		agents, err := support.NewStore(store).SeedAgents(ctx)
		if err != nil {
			return fmt.Errorf("seed support agents: %w", err)
		}
		demoData, err := seed.NewStore(store).SeedDemoData(ctx, res)
		if err != nil {
			return fmt.Errorf("seed demo data: %w", err)
		}
		demoTickets, err := support.NewStore(store).SeedDemoTickets(ctx, res.Demo.ID)
		if err != nil {
			return fmt.Errorf("seed demo tickets: %w", err)
		}
		if err := bootstrapKeys(ctx, log, cfg, store, res); err != nil {
			return err
		}
		log.Info("seeded", "demo_organization", res.Demo.ID, "demo_account", res.Account.ID,
			"demo_sandbox_services", len(demoData.Services), "demo_sandbox_invoices", len(demoData.Invoices), "demo_sandbox_tickets", demoTickets, "support_agents", len(agents))
		return nil
	case "keys":
		return keysCommand(ctx, cfg, log, args[1:], stdout)
	case "signing-keys":
		return signingKeysCommand(ctx, cfg, log, args[1:], stdout)
	case "rekey":
		store, closeDB, err := openStore(ctx, cfg, log)
		if err != nil {
			return err
		}
		defer closeDB()
		n, err := rekey.NewStore(store).RekeySecrets(ctx)
		if err != nil {
			return fmt.Errorf("rekey: %w", err)
		}
		fmt.Fprintf(stdout, "re-sealed %d secrets under key %s\n", n, store.Sealer.KeyID())
		return nil
	case "serve":
		return serve(ctx, cfg, log, false, true)
	case "worker":
		return serve(ctx, cfg, log, true, false)
	case "dev":
		return serve(ctx, cfg, log, true, true)
	default:
		fmt.Fprint(stdout, usage)
		return fmt.Errorf("unknown command %q", args[0])
	}
}

// newLogger is the process's logger on standard error: LOG_FORMAT,
// LOG_LEVEL, secrets redacted, and each record logged with a context
// carrying what it knows (an API request's id and caller, an activity's
// workflow).
func newLogger(cfg config.Config) *slog.Logger {
	return logging.New(os.Stderr, cfg.LogFormat, cfg.LogLevel, api.LogAttrs, logging.Activity)
}

// openDB connects and migrates.
func openDB(ctx context.Context, cfg config.Config, log *slog.Logger) (*gorm.DB, error) {
	if path, ok := strings.CutPrefix(cfg.DatabaseURL, "sqlite:"); ok {
		if dir := dirOf(path); dir != "" {
			if err := os.MkdirAll(dir, 0o750); err != nil {
				return nil, fmt.Errorf("DATABASE_URL: create folder %s: %w", dir, err)
			}
		}
	}
	db, err := models.Open(ctx, cfg.DatabaseURL, log)
	if err != nil {
		return nil, fmt.Errorf("DATABASE_URL: %w", err)
	}
	if err := migrate.Run(ctx, db); err != nil {
		_ = models.Close(db)
		return nil, fmt.Errorf("migrate: %w", err)
	}
	return db, nil
}

func dirOf(path string) string {
	path, _, _ = strings.Cut(path, "?")
	if i := strings.LastIndex(path, "/"); i > 0 {
		return path[:i]
	}
	return ""
}

func openStore(ctx context.Context, cfg config.Config, log *slog.Logger) (*models.Store, func(), error) {
	if err := cfg.RequireSecrets(); err != nil {
		return nil, nil, err
	}
	sealer, err := models.NewSealer(cfg.SecretsKey, cfg.SecretsKeyPrevious...)
	if err != nil {
		return nil, nil, fmt.Errorf("SECRETS_KEY: %w", err)
	}
	db, err := openDB(ctx, cfg, log)
	if err != nil {
		return nil, nil, err
	}
	store := models.NewStore(db, sealer)
	if cfg.RedisURL == "" {
		return store, func() { _ = models.Close(db) }, nil
	}
	// Every command's commits that change services or operations are told
	// to the shared Redis (package rowversion), so that the API's
	// instances see them in their next answer: the worker's, `seed`'s, the
	// API's own.
	rdb, _, closeRedis, err := redisconn.Open(ctx, cfg.RedisURL)
	if err != nil {
		_ = models.Close(db)
		return nil, nil, fmt.Errorf("REDIS_URL: %w", err)
	}
	if err := rowversion.Watch(store, rdb, log); err != nil {
		_ = closeRedis()
		_ = models.Close(db)
		return nil, nil, err
	}
	return store, func() {
		_ = models.OnWrites(db, nil, nil) // before the client closes
		_ = closeRedis()
		_ = models.Close(db)
	}, nil
}

// bootstrapKeys ensures PLATFORM_ADMIN_KEY (provider admin, `*`) and
// PLATFORM_DEMO_KEY (demo tenant) exist with exactly their configured
// values, and gives the demo user PLATFORM_DEMO_PASSWORD. A configured key
// that was revoked is not brought back: it is logged, stays revoked, and
// the platform starts without it.
func bootstrapKeys(ctx context.Context, log *slog.Logger, cfg config.Config, store *models.Store, seeded *seed.SeedResult) error {
	if cfg.AdminKey != "" {
		provider, err := identity.NewStore(store).EnsureProviderOrganization(ctx)
		if err != nil {
			return err
		}
		if _, err := identity.NewStore(store).EnsureAPIKey(ctx, provider.ID, cfg.AdminKey, "Platform admin (bootstrap)", models.RoleAdmin, []string{"*"}); err != nil {
			if models.ErrorCode(err) != models.CodeInvalidStateTransition {
				return fmt.Errorf("PLATFORM_ADMIN_KEY: %w", err)
			}
			log.Error("PLATFORM_ADMIN_KEY is revoked and stays revoked: configure a new key (or delete .data/ in development)", "error", err.Error())
		}
	}
	if cfg.DemoKey != "" {
		demo := seeded
		if demo == nil {
			org, err := seed.NewStore(store).DemoOrganization(ctx)
			if err != nil {
				return fmt.Errorf("PLATFORM_DEMO_KEY needs the demo tenant: run `platform seed` first")
			}
			demo = &seed.SeedResult{Demo: org}
		}
		if _, err := identity.NewStore(store).EnsureAPIKey(ctx, demo.Demo.ID, cfg.DemoKey, "Demo key (bootstrap)", models.RoleCustomer, []string{"*"}); err != nil {
			if models.ErrorCode(err) != models.CodeInvalidStateTransition {
				return fmt.Errorf("PLATFORM_DEMO_KEY: %w", err)
			}
			log.Error("PLATFORM_DEMO_KEY is revoked and stays revoked: configure a new key", "error", err.Error())
		}
	}
	if cfg.DemoPassword != "" {
		if err := identity.NewStore(store).EnsureUserPassword(ctx, identity.DemoUserEmail, cfg.DemoPassword); err != nil {
			return fmt.Errorf("PLATFORM_DEMO_PASSWORD: %w (run `platform seed` first)", err)
		}
	}
	return nil
}

func keysCommand(ctx context.Context, cfg config.Config, log *slog.Logger, args []string, stdout io.Writer) error {
	if len(args) == 0 || args[0] != "create" {
		return errors.New("usage: platform keys create -org ORG_ID [-env live|test] [-name NAME] [-permissions a,b] [-role customer|agent|admin]")
	}
	fs := flag.NewFlagSet("keys create", flag.ContinueOnError)
	org := fs.String("org", "", "organization id (default: the provider organization)")
	env := fs.String("env", "live", "environment: live or test")
	name := fs.String("name", "CLI key", "key name")
	perms := fs.String("permissions", "*", "comma-separated permissions")
	role := fs.String("role", "", "role (default: admin in the provider organization, customer elsewhere)")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	store, closeDB, err := openStore(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer closeDB()
	provider, err := identity.NewStore(store).EnsureProviderOrganization(ctx)
	if err != nil {
		return err
	}
	operator := &models.Principal{Kind: models.PrincipalAPIKey, ID: "cli", OrganizationID: provider.ID, Environment: models.Environment(*env), Role: models.RoleAdmin, Permissions: []string{"*"}}
	in := identity.APIKeyInput{Name: *name, Permissions: strings.Split(*perms, ","), OrganizationID: *org, Environment: models.Environment(*env), Role: models.Role(*role)}
	if *org == "" {
		in.OrganizationID = provider.ID
		if in.Role == "" {
			in.Role = models.RoleAdmin
		}
	}
	issued, err := identity.NewStore(store).CreateAPIKey(ctx, operator, in)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "id:  %s\nkey: %s\n", issued.Key.ID, issued.Secret)
	return nil
}

// serve runs the API, the worker, or both until ctx ends.
func serve(ctx context.Context, cfg config.Config, log *slog.Logger, runWorker, runAPI bool) error {
	store, closeDB, err := openStore(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer closeDB()
	// The process's metrics (docs/operations.md): served on METRICS_ADDR
	// (API) and WORKER_HTTP_ADDR (worker), never on the API's port.
	m := metrics.New()
	store.Observer = m
	if sqlDB, err := store.DB.DB(); err == nil {
		m.RegisterDB(sqlDB)
	}
	// Traces (docs/operations.md): off unless OTEL_EXPORTER_OTLP_ENDPOINT is set.
	tp, err := newTracing(ctx, cfg, runWorker, runAPI)
	if err != nil {
		return err
	}
	defer shutdownTracing(tp, cfg, log)
	if tp.Enabled() {
		log.Info("tracing on: spans exported by OTLP")
	}
	if err := tp.InstrumentDB(store.DB); err != nil {
		return err
	}
	_, stopPprof, err := startPprof(ctx, cfg.PprofAddr, log)
	if err != nil {
		return err
	}
	defer stopPprof()
	if runAPI {
		if err := bootstrapKeys(ctx, log, cfg, store, nil); err != nil {
			return err
		}
	}
	if runAPI && runWorker && cfg.DevSAMLIdPAddr != "" && cfg.SAMLIdPMetadataURL == "" {
		stopIdP, err := startDevIdP(ctx, &cfg, store, log)
		if err != nil {
			return err
		}
		defer stopIdP()
	}
	var tc client.Client
	// The process's identity to Temporal (its workers' pollers, the UI's
	// workers list), which the worker's /readyz looks for on the server.
	identity := temporalclient.Identity(roleName(runWorker, runAPI))
	topts := temporalclient.Options{Address: cfg.TemporalAddress, Namespace: cfg.TemporalNamespace, Logger: log, Metrics: m.TemporalHandler(), Tracing: tp, Identity: identity,
		Compression: cfg.TemporalCompression}
	if runWorker {
		dialCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
		tc, err = temporalclient.Dial(dialCtx, topts)
		cancel()
	} else {
		tc, err = temporalclient.NewLazy(topts)
	}
	if err != nil {
		return fmt.Errorf("TEMPORAL_ADDRESS: %w", err)
	}
	defer tc.Close()

	// The blob store: attachments (API) and report files (worker).
	blobs, err := blobstore.Open(ctx, cfg.BlobURL)
	if err != nil {
		return err
	}
	defer func() { _ = blobs.Close() }()
	g, gctx := errgroup.WithContext(ctx)
	if runWorker {
		// The worker's own listener: /healthz, /readyz and /metrics. It
		// opens before the workers start, so /readyz answers 503 meanwhile.
		health := worker.NewHealth(tc, identity, func(ctx context.Context) error { return models.Ping(ctx, store.DB) }, m,
			cfg.TemporalTaskQueue, cfg.TemporalBackgroundTaskQueue)
		m.RegisterOutboxLag(eventlog.NewStore(store).OldestUndispatched, nil)
		if cfg.WorkerHTTPAddr != "" {
			hs, err := metrics.Listen(cfg.WorkerHTTPAddr, cfg.MetricsAllow, health.Handler(), log)
			if err != nil {
				return fmt.Errorf("WORKER_HTTP_ADDR: %w", err)
			}
			defer hs.Close(ctx)
			log.Info("worker health and metrics listening", "addr", hs.Addr())
		}
		if err := temporalclient.EnsureSearchAttributes(ctx, tc, cfg.TemporalNamespace); err != nil {
			log.Warn("could not register search attributes; register them on the cluster", "error", err)
		}
		sim := simulator.New(store, simulator.Options{StepDelay: cfg.SimulatorStepDelay, Logger: log})
		// Billing charges API overage from the rate limiter's monthly counters:
		// it needs the shared Redis (the embedded one lives in the API process).
		var apiUsage activities.APIUsage
		var wrdb redis.UniversalClient
		if cfg.RedisURL != "" {
			var closeWorkerRedis func() error
			wrdb, _, closeWorkerRedis, err = redisconn.Open(ctx, cfg.RedisURL)
			if err != nil {
				return fmt.Errorf("REDIS_URL: %w", err)
			}
			defer closeWorkerRedis()
			apiUsage = ratelimit.New(wrdb)
		}
		// One webhook client (and connection pool) for both workers.
		hooks := webhooks.NewClient(cfg.WebhookAllowPrivate, webhooks.WithTransportWrapper(tp.WrapTransport))
		w := worker.New(tc, cfg.TemporalTaskQueue, worker.Deps{Store: store, Logger: log, Southbound: sim,
			Webhooks: hooks, PublicBaseURL: cfg.PublicBaseURL, APIUsage: apiUsage, StopTimeout: cfg.ShutdownTimeout,
			Blobs: blobs, ReportLinkTTL: cfg.ReportLinkTTL, Metrics: m})
		if err := w.Start(); err != nil {
			return fmt.Errorf("start worker: %w", err)
		}
		health.Started(cfg.TemporalTaskQueue)
		log.Info("worker polling", "task_queue", cfg.TemporalTaskQueue, "temporal", cfg.TemporalAddress)
		g.Go(func() error { <-gctx.Done(); health.Stopped(cfg.TemporalTaskQueue); w.Stop(); return nil })
		// Housekeeping (purging expired OAuth artefacts): one loop per
		// namespace under a fixed id; every worker joins the running one.
		hkCtx, hkCancel := context.WithTimeout(ctx, 30*time.Second)
		if _, err := workflows.StartHousekeeping(hkCtx, tc, cfg.TemporalTaskQueue); err != nil {
			log.Warn("could not start the housekeeping workflow; expired OAuth artefacts are not purged until a worker starts it", "error", err)
		}
		hkCancel()
		bw := worker.NewBackground(tc, cfg.TemporalBackgroundTaskQueue, worker.Deps{Store: store, Logger: log, Southbound: sim,
			Webhooks: hooks, PublicBaseURL: cfg.PublicBaseURL, StopTimeout: cfg.ShutdownTimeout,
			Blobs: blobs, ReportLinkTTL: cfg.ReportLinkTTL, Metrics: m})
		if err := bw.Start(); err != nil {
			return fmt.Errorf("start background worker: %w", err)
		}
		health.Started(cfg.TemporalBackgroundTaskQueue)
		log.Info("background worker polling", "task_queue", cfg.TemporalBackgroundTaskQueue)
		g.Go(func() error { <-gctx.Done(); health.Stopped(cfg.TemporalBackgroundTaskQueue); bw.Stop(); return nil })
		g.Go(func() error { sim.RunTelemetry(gctx, time.Minute); return nil })
		// The outbox dispatcher: hands committed events to delivery workflows
		// and to the event triggers of orchestrations.
		dispatcher := events.NewDispatcher(store, tc, events.Options{TaskQueue: cfg.TemporalTaskQueue, Logger: log,
			OnEvent: activities.OrchestrationEventHook(tc, store), TrackerPollInterval: cfg.TrackerPollInterval,
			// Wake the real-time streams of every API instance (they poll
			// the event log too: a lost message costs latency, not events).
			// Bounded: Redis being away must not hold up the dispatch.
			Announce: func(ctx context.Context, evs []eventlog.Event) {
				actx, cancel := context.WithTimeout(ctx, 250*time.Millisecond)
				defer cancel()
				if err := api.AnnounceEvents(actx, wrdb, evs); err != nil {
					log.Debug("announcing events to the real-time streams failed", "error", err)
				}
			}})
		g.Go(func() error { return dispatcher.Run(gctx) })
		// The notification outbox: e-mail through SMTP_URL, SMS through SMS_URL.
		mailer, err := newNotifier(store, cfg, log, tp)
		if err != nil {
			return err
		}
		g.Go(func() error { return mailer.Run(gctx) })
	}
	if runAPI {
		var rdb redis.UniversalClient
		rdb, embedded, closeRedis, err := redisconn.Open(ctx, cfg.RedisURL)
		if err != nil {
			return fmt.Errorf("REDIS_URL: %w", err)
		}
		defer closeRedis()
		if embedded {
			log.Info("using the embedded in-process Redis (set REDIS_URL for a real one)")
		}
		limiter := ratelimit.New(rdb)
		defer func() { // before Redis closes: the last requests' slot releases go out
			fctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			limiter.Flush(fctx)
		}()
		// Row versions are trusted when every process that writes the
		// database tells its commits to this Redis: a shared one
		// (REDIS_URL, set on every process; openStore installed the
		// notices), or the embedded one with the worker in this process
		// (dev), whose notices are installed here.
		if embedded {
			if err := rowversion.Watch(store, rdb, log); err != nil {
				return err
			}
			defer func() { _ = models.OnWrites(store.DB, nil, nil) }() // before the embedded server stops
		}
		rowVersions := cfg.RedisURL != "" || runWorker
		srv := api.New(api.Deps{Config: cfg, Store: store, Temporal: tc, Redis: rdb, Limiter: limiter, Logger: log, Blobs: blobs, Metrics: m, Tracing: tp, RowVersions: rowVersions})
		// In `dev` with WORKER_HTTP_ADDR equal to METRICS_ADDR, the worker's
		// listener serves /metrics for both.
		if cfg.MetricsAddr != "" && !(runWorker && cfg.MetricsAddr == cfg.WorkerHTTPAddr) {
			ms, err := metrics.Listen(cfg.MetricsAddr, cfg.MetricsAllow, m.Handler(), log)
			if err != nil {
				return fmt.Errorf("METRICS_ADDR: %w", err)
			}
			defer ms.Close(ctx)
			log.Info("API metrics listening", "addr", ms.Addr()+"/metrics")
		}
		log.Info("API listening", "addr", cfg.HTTPAddr, "docs", cfg.PublicBaseURL+"/docs")
		g.Go(func() error { return srv.Run(gctx) })
		if cfg.MTLSAddr != "" {
			log.Info("mutual-TLS listener", "addr", cfg.MTLSAddr)
			g.Go(func() error { return srv.RunMTLS(gctx) })
		}
	}
	if err := g.Wait(); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	log.Info("stopped")
	return nil
}

// newNotifier returns the notification outbox's dispatcher with the
// channels the configuration enables.
func newNotifier(store *models.Store, cfg config.Config, log *slog.Logger, tp *tracing.Provider) (*notify.Dispatcher, error) {
	opts := notify.Options{Logger: log}
	if cfg.SMTPURL != "" {
		email, err := notify.NewSMTP(cfg.SMTPURL, cfg.SMTPFrom)
		if err != nil {
			return nil, err
		}
		opts.Email = email
	}
	if cfg.SMSURL != "" {
		opts.SMS = notify.NewSMSHTTP(cfg.SMSURL, tp.WrapTransport)
	}
	if opts.Email == nil && opts.SMS == nil {
		log.Info("notifications stay in the outbox (set SMTP_URL and SMS_URL to send them); the portal shows them, verification codes excepted")
	}
	return notify.NewDispatcher(store, opts), nil
}

// newTracing is the process's tracer provider (off without
// OTEL_EXPORTER_OTLP_ENDPOINT), named after its role unless
// OTEL_SERVICE_NAME says otherwise.
func newTracing(ctx context.Context, cfg config.Config, runWorker, runAPI bool) (*tracing.Provider, error) {
	return tracing.New(ctx, tracing.Options{Endpoint: cfg.OTLPEndpoint, ServiceName: cfg.OTELServiceName, DefaultServiceName: roleName(runWorker, runAPI)})
}

// tracingFlushTimeout bounds the flush of the last spans at shutdown.
const tracingFlushTimeout = 5 * time.Second

// roleName names the process by what it runs: platform-api (serve),
// platform-worker (worker) or platform-dev (both).
func roleName(runWorker, runAPI bool) string {
	switch {
	case runAPI && !runWorker:
		return tracing.ServiceAPI
	case runWorker && !runAPI:
		return tracing.ServiceWorker
	}
	return tracing.ServiceDev
}

// shutdownTracing flushes the spans not yet exported, within
// tracingFlushTimeout (or the shutdown timeout when shorter): it runs after
// the API drained and the workers stopped, inside the grace period the
// orchestrator allows.
func shutdownTracing(tp *tracing.Provider, cfg config.Config, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), min(cfg.ShutdownTimeout, tracingFlushTimeout))
	defer cancel()
	if err := tp.Shutdown(ctx); err != nil {
		log.Warn("could not flush the last traces", "error", err)
	}
}
