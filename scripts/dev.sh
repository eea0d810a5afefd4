#!/usr/bin/env bash
# `make run`: the whole platform on embedded defaults, in the foreground.
# Starts the Temporal dev server (with its Web UI), migrates and seeds the
# SQLite database, and runs the API and the worker in one process with an
# embedded Redis. Ctrl-C stops everything. Data lives under .data/.
# The API listens on loopback only (HTTP_ADDR=127.0.0.1:8080): the banner prints
# an admin key and the demo password. HTTP_ADDR=0.0.0.0:8080 exposes it.
# Ports: HTTP_ADDR (API), TEMPORAL_ADDRESS (Temporal), TEMPORAL_UI_PORT
# (Temporal Web UI), DEV_SAML_IDP_ADDR (development IdP).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

mkdir -p .data
chmod 700 .data

# Development secrets, made once and kept under .data/ so every run prints the same keys.
random_alnum() { LC_ALL=C tr -dc 'A-Za-z0-9' </dev/urandom | head -c "$1"; }
[ -s .data/secrets.key ] || head -c 32 /dev/urandom | base64 >.data/secrets.key
[ -s .data/admin.key ] || echo "sk_live_$(random_alnum 56)" >.data/admin.key
[ -s .data/demo.key ] || echo "sk_test_$(random_alnum 56)" >.data/demo.key
[ -s .data/demo.password ] || echo "$(random_alnum 16)" >.data/demo.password

export SECRETS_KEY="${SECRETS_KEY:-$(cat .data/secrets.key)}"
export PLATFORM_ADMIN_KEY="${PLATFORM_ADMIN_KEY:-$(cat .data/admin.key)}"
export PLATFORM_DEMO_KEY="${PLATFORM_DEMO_KEY:-$(cat .data/demo.key)}"
export PLATFORM_DEMO_PASSWORD="${PLATFORM_DEMO_PASSWORD:-$(cat .data/demo.password)}"
export DEV_SAML_IDP_ADDR="${DEV_SAML_IDP_ADDR:-127.0.0.1:8090}"
export DATABASE_URL="${DATABASE_URL:-sqlite:.data/platform.db}"
export HTTP_ADDR="${HTTP_ADDR:-127.0.0.1:8080}"
export TEMPORAL_ADDRESS="${TEMPORAL_ADDRESS:-127.0.0.1:7233}"
TEMPORAL_UI_PORT="${TEMPORAL_UI_PORT:-8233}"
export TEMPORAL_UI_URL="${TEMPORAL_UI_URL:-http://localhost:${TEMPORAL_UI_PORT}}"
export WEBHOOK_ALLOW_PRIVATE="${WEBHOOK_ALLOW_PRIVATE:-true}"
api_port="${HTTP_ADDR##*:}"
api_host="${HTTP_ADDR%:*}"
case "$api_host" in "" | 0.0.0.0 | "[::]") api_host=127.0.0.1 ;; esac
export PUBLIC_BASE_URL="${PUBLIC_BASE_URL:-http://localhost:${api_port}}"
temporal_port="${TEMPORAL_ADDRESS##*:}"

port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
# Each port with the setting that moves it.
for entry in "$api_port HTTP_ADDR" "$temporal_port TEMPORAL_ADDRESS" "$TEMPORAL_UI_PORT TEMPORAL_UI_PORT" "${DEV_SAML_IDP_ADDR##*:} DEV_SAML_IDP_ADDR"; do
	p="${entry%% *}" setting="${entry#* }"
	if port_busy "$p"; then
		echo "make run: port $p ($setting) is already in use (another 'make run'?). Stop it, or move it with $setting." >&2
		echo "  The settings that move ports: HTTP_ADDR=127.0.0.1:8080 (API), TEMPORAL_ADDRESS=127.0.0.1:7233 (Temporal)," >&2
		echo "  TEMPORAL_UI_PORT=8233 (Temporal Web UI), DEV_SAML_IDP_ADDR=127.0.0.1:8090 (development IdP)," >&2
		echo "  e.g. HTTP_ADDR=127.0.0.1:18080 TEMPORAL_ADDRESS=127.0.0.1:17233 TEMPORAL_UI_PORT=18233 DEV_SAML_IDP_ADDR=127.0.0.1:18090 make run" >&2
		exit 1
	fi
done

temporal_pid=""
cleanup() {
	trap - EXIT INT TERM
	if [ -n "$temporal_pid" ] && kill -0 "$temporal_pid" 2>/dev/null; then
		kill -INT "$temporal_pid" 2>/dev/null || true
		for _ in $(seq 1 50); do kill -0 "$temporal_pid" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$temporal_pid" 2>/dev/null || true
		wait "$temporal_pid" 2>/dev/null || true
	fi
	echo "make run: stopped."
}
trap cleanup EXIT
trap 'exit 130' INT TERM

search_attributes=()
for sa in OrganizationId=Keyword Environment=Keyword OperationType=Keyword ResourceId=Keyword \
	TicketStatus=Keyword TicketPriority=Keyword SlaNextBreachAt=Datetime; do
	search_attributes+=(--search-attribute "$sa")
done
bin/temporal server start-dev \
	--db-filename .data/temporal.db --sqlite-pragma journal_mode=wal \
	--ip 127.0.0.1 --port "$temporal_port" --ui-port "$TEMPORAL_UI_PORT" --log-level error \
	"${search_attributes[@]}" >.data/temporal.log 2>&1 &
temporal_pid=$!

for _ in $(seq 1 300); do
	port_busy "$temporal_port" && break
	if ! kill -0 "$temporal_pid" 2>/dev/null; then
		echo "make run: the Temporal dev server did not start; see .data/temporal.log" >&2
		exit 1
	fi
	sleep 0.1
done

bin/platform seed

bin/platform dev &
platform_pid=$!
trap 'kill -INT "$platform_pid" 2>/dev/null; wait "$platform_pid" 2>/dev/null; exit 130' INT TERM

# The banner once the API answers GET /readyz with 200.
ready=""
for _ in $(seq 1 600); do
	if ! kill -0 "$platform_pid" 2>/dev/null; then
		wait "$platform_pid" || true
		echo "make run: the platform stopped before it was ready (see its log above)." >&2
		exit 1
	fi
	if [ "$(curl -s -o /dev/null -w '%{http_code}' "http://${api_host}:${api_port}/readyz" 2>/dev/null)" = "200" ]; then
		ready=1
		break
	fi
	sleep 0.2
done
if [ -z "$ready" ]; then
	echo "make run: the API did not become ready within 2 minutes; GET /readyz explains why." >&2
fi

cat <<BANNER

  Telecom & IT services platform is ready
  -----------------------------------------------------------------
  API          ${PUBLIC_BASE_URL}/v1   (also ${PUBLIC_BASE_URL}/api/v1)
  API docs     ${PUBLIC_BASE_URL}/docs   (OpenAPI: ${PUBLIC_BASE_URL}/openapi.json)
  Portal       ${PUBLIC_BASE_URL}/portal
               single sign-on: user "demo", password ${PLATFORM_DEMO_PASSWORD}   (development IdP at http://${DEV_SAML_IDP_ADDR})
               or e-mail demo.user@demo.example with the same password
  Temporal UI  ${TEMPORAL_UI_URL}
  Admin key    ${PLATFORM_ADMIN_KEY}
  Demo key     ${PLATFORM_DEMO_KEY}   (demo tenant, sandbox)

  Try:  curl -s -H "Authorization: Bearer ${PLATFORM_DEMO_KEY}" ${PUBLIC_BASE_URL}/v1/services/catalog
  Ctrl-C stops everything. Data: .data/
  -----------------------------------------------------------------

BANNER

wait "$platform_pid"
