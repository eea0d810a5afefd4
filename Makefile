# The platform's commands. `make run` starts everything on embedded defaults;
# `make test` runs every test on SQLite, then again on PostgreSQL (when its
# binaries exist) those that use a database, the fault tests included
# (test-faults).
GO ?= go
STATICCHECK_VERSION ?= v0.8.2
WORKFLOWCHECK_VERSION ?= v0.6.0

.PHONY: run build test test-sqlite test-postgres test-faults soak fuzz lint workflowcheck bench bench-load bench-start bench-bulk bench-webhooks bench-sla bench-report bench-analytics temporal clean

run: build temporal
	@bash scripts/dev.sh

build:
	@mkdir -p bin
	$(GO) build -o bin/platform ./cmd/platform

temporal:
	@bash scripts/install-temporal.sh

test: temporal test-sqlite test-postgres test-faults

test-sqlite:
	@echo "== tests on SQLite =="
	$(GO) test -count=1 -timeout 25m ./...

# The PostgreSQL pass runs again only the packages whose tests reach the test
# database through testenv (Store, SeededStore, DatabaseURL, IsPostgres) or
# read TEST_DATABASE_URL: scripts/database-packages.sh derives them from the
# sources on every run (-v lists the others). The other packages' tests never
# see which database the suite runs on, so the SQLite pass already ran them
# exactly as this pass would.
test-postgres:
	@echo "== tests on PostgreSQL =="
	@pkgs="$$(GO=$(GO) bash scripts/database-packages.sh)" && [ -n "$$pkgs" ] && \
		bash scripts/with-postgres.sh $(GO) test -count=1 -timeout 25m $$pkgs

# Every fuzz target (docs/fuzzing.md) for FUZZTIME each, one after another,
# each package's instrumented test binary built once; their seed corpora
# also run as ordinary tests in `make test`.
FUZZTIME ?= 2s
fuzz:
	FUZZTIME=$(FUZZTIME) GO=$(GO) bash scripts/fuzz.sh

# Fault tests (docs/reliability.md, build tag faults): the built binary as
# real processes against PostgreSQL, redis-server and Temporal dev server
# processes that the tests kill, stop and start again, each test on servers
# of its own, four at a time (they mostly wait out outages and recoveries in
# real time, which overlap). On SQLite the test whose outcome depends on the
# database (the others skip, saying why), then on PostgreSQL.
test-faults: temporal
	@echo "== fault tests on SQLite =="
	$(GO) test -tags faults -count=1 -parallel 4 -timeout 15m ./integration/faults/
	@echo "== fault tests on PostgreSQL =="
	@bash scripts/with-postgres.sh $(GO) test -tags faults -count=1 -parallel 4 -timeout 20m ./integration/faults/

# Soak (docs/reliability.md): mixed traffic at a steady rate through two
# APIs with a worker SIGKILLed every 30 s, for SOAK_DURATION (30s to 30m),
# then a consistency check over the database; prints the figures.
SOAK_DURATION ?= 3m
soak: temporal
	SOAK_DURATION=$(SOAK_DURATION) bash scripts/with-postgres.sh $(GO) test -tags 'faults soak' -count=1 -run TestSoak -v -timeout 60m ./integration/faults/

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...
	@$(MAKE) --no-print-directory workflowcheck

# Temporal's static determinism checker over every workflow (and what it calls).
workflowcheck:
	$(GO) run go.temporal.io/sdk/contrib/tools/workflowcheck@$(WORKFLOWCHECK_VERSION) ./workflows/...

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

# API throughput under load (docs/performance.md): the platform's `serve` on
# loopback against a real redis-server, driven by vegeta at 1, 8, 32 and 128
# connections next to two floors (bare Fiber; Fiber + key hash + redis_rate),
# on SQLite, then on PostgreSQL when its binaries exist. LOAD_BENCH_DURATION
# is the time per point; LOAD_BENCH_CONNECTIONS (comma-separated) and
# LOAD_BENCH_HALF_CONNECTIONS pass through from the environment;
# LOAD_BENCH_PROFILE=file saves a CPU profile of the platform under the
# catalog load (file-postgres for the PostgreSQL run).
LOAD_BENCH_DURATION ?= 5s
LOAD_BENCH_RUN = LOAD_BENCH=1 LOAD_BENCH_DURATION=$(LOAD_BENCH_DURATION) $(if $(LOAD_BENCH_PROFILE),LOAD_BENCH_PROFILE=$(abspath $(LOAD_BENCH_PROFILE)))
bench-load:
	$(LOAD_BENCH_RUN) $(GO) test -run '^$$' -bench BenchmarkAPILoad -benchtime 1x -timeout 60m ./loadbench/
	@$(LOAD_BENCH_RUN) bash scripts/with-postgres.sh $(GO) test -run '^$$' -bench BenchmarkAPILoad -benchtime 1x -timeout 60m ./loadbench/

# Starting an operation (docs/performance.md): POST /v1/services/provision
# on `platform serve` against a raw SDK ExecuteWorkflow loop on the same
# Temporal dev server, at 1, 8 and 32 connections, on SQLite (prefix the
# command with scripts/with-postgres.sh for PostgreSQL). LOAD_BENCH_DURATION
# and LOAD_BENCH_CONNECTIONS as for bench-load.
bench-start: temporal
	$(LOAD_BENCH_RUN) $(GO) test -run '^$$' -bench BenchmarkProvisionStart -benchtime 1x -timeout 60m ./loadbench/

# Bulk provisioning (docs/performance.md): POST /v1/services/bulk/provision
# of LOAD_BENCH_BULK_ITEMS items (default 100,1000,5000) run by `platform
# worker` with the simulator's step delay at zero, against a raw SDK program
# of the former shape (a child workflow of seven no-op activities per item,
# 50 in flight) on the same Temporal dev server, on SQLite (prefix the
# command with scripts/with-postgres.sh for PostgreSQL).
bench-bulk: temporal
	LOAD_BENCH=1 $(GO) test -run '^$$' -bench BenchmarkBulkThroughput -benchtime 1x -timeout 120m ./loadbench/

# Webhook fan-out (docs/performance.md): LOAD_BENCH_EVENTS events (default
# 1000) to LOAD_BENCH_SUBSCRIPTIONS subscriptions each (default 10) on a
# loopback receiver, delivered by `platform worker`, on SQLite.
# LOAD_BENCH_EVENT_RATE (events/s; default: as fast as they commit) passes
# through from the environment.
bench-webhooks: temporal
	LOAD_BENCH=1 $(GO) test -run '^$$' -bench BenchmarkWebhookFanout -benchtime 1x -timeout 60m ./loadbench/

# SLA clocks at scale (docs/performance.md): SLA_BENCH_TICKETS open tickets,
# each with its SLA workflow, on a real Temporal dev server. SQLite unless
# TEST_DATABASE_URL names a PostgreSQL server; SLA_BENCH_CONCURRENCY (the
# creations in flight, default 16) and SLA_BENCH_QUIET (the idle window,
# default 30s) pass through from the environment.
SLA_BENCH_TICKETS ?= 10000
bench-sla: temporal
	SLA_BENCH_TICKETS=$(SLA_BENCH_TICKETS) $(GO) test -run '^$$' -bench BenchmarkSLAOpenTickets -benchtime 1x -timeout 60m ./integration/

# Support report runs over REPORT_BENCH_TICKETS generated tickets
# (docs/performance.md): time and peak heap against loading the tickets.
REPORT_BENCH_TICKETS ?= 100000
bench-report:
	REPORT_BENCH_TICKETS=$(REPORT_BENCH_TICKETS) $(GO) test -run '^$$' -bench BenchmarkSupportReport -benchtime 1x -timeout 60m ./models/support/

# GET /v1/analytics/usage over ANALYTICS_BENCH_SERVICES services with one
# telemetry sample per hour for ANALYTICS_BENCH_DAYS days (docs/performance.md):
# time and heap against a count and sum over the same samples.
ANALYTICS_BENCH_SERVICES ?= 1000
ANALYTICS_BENCH_DAYS ?= 365
bench-analytics:
	ANALYTICS_BENCH_SERVICES=$(ANALYTICS_BENCH_SERVICES) ANALYTICS_BENCH_DAYS=$(ANALYTICS_BENCH_DAYS) $(GO) test -run '^$$' -bench BenchmarkAnalyticsUsage -benchtime 1x -benchmem -timeout 120m ./api/

clean:
	rm -rf bin/platform
