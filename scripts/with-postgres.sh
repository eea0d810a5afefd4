#!/usr/bin/env bash
# Usage: scripts/with-postgres.sh CMD [ARGS...]
#
# Starts a throwaway PostgreSQL server (from the machine's PostgreSQL 15
# binaries) in a fresh temporary folder on a free loopback port, runs CMD with
#   TEST_DATABASE_URL=postgres://postgres@127.0.0.1:PORT/postgres?sslmode=disable
# exported, then stops the server, removes the folder and exits with CMD's
# status. CMD runs in the caller's working directory.
#
# Without PostgreSQL binaries it prints a message and exits 0, or exits 1 when
# CI=true. Set PG_BINDIR to use binaries from another folder.
set -euo pipefail

if [ $# -eq 0 ]; then
	echo "usage: $0 CMD [ARGS...]" >&2
	exit 2
fi

pgbin=""
for dir in "${PG_BINDIR:-}" /usr/lib/postgresql/15/bin "$(pg_config --bindir 2>/dev/null || true)"; do
	if [ -n "$dir" ] && [ -x "$dir/initdb" ] && [ -x "$dir/pg_ctl" ] && [ -x "$dir/pg_isready" ]; then
		pgbin="$dir"
		break
	fi
done
if [ -z "$pgbin" ]; then
	echo "with-postgres: PostgreSQL server binaries (initdb, pg_ctl) not found in" \
		"/usr/lib/postgresql/15/bin or pg_config --bindir; install postgresql-15." >&2
	if [ "${CI:-}" = "true" ]; then
		exit 1
	fi
	echo "with-postgres: skipping: $*" >&2
	exit 0
fi

# initdb and pg_ctl refuse to run as root: use the postgres account then.
as_pg=()
if [ "$(id -u)" -eq 0 ]; then
	if ! id postgres >/dev/null 2>&1; then
		echo "with-postgres: running as root but there is no postgres user to run the server as" >&2
		exit 1
	fi
	as_pg=(runuser -u postgres --)
fi

tmp="$(mktemp -d "${TMPDIR:-/tmp}/with-postgres.XXXXXX")"
started=""

pg() {
	# Run a PostgreSQL tool from the temporary folder, so that it never needs
	# access to the caller's working directory.
	(cd "$tmp" && "${as_pg[@]}" "$@")
}

cleanup() {
	local status=$?
	if [ -n "$started" ]; then
		pg "$pgbin/pg_ctl" -D "$tmp/data" -m immediate -w stop >/dev/null 2>&1 || true
	fi
	rm -rf "$tmp"
	exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

chmod 700 "$tmp"
if [ ${#as_pg[@]} -gt 0 ]; then
	chown postgres: "$tmp"
fi

if ! pg "$pgbin/initdb" -D "$tmp/data" -A trust -U postgres -E UTF8 --locale=C --no-sync >"$tmp/initdb.log" 2>&1; then
	cat "$tmp/initdb.log" >&2
	echo "with-postgres: initdb failed" >&2
	exit 1
fi

# Pick a random port below the kernel's ephemeral range (so that it does not
# collide with ports handed out for outgoing connections or by bind(:0)) and
# let the server itself tell whether it is free; retry a few times.
port_in_use() {
	(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}
port=""
for _ in $(seq 1 20); do
	candidate=$((20000 + RANDOM % 12000))
	if port_in_use "$candidate"; then
		continue
	fi
	: >"$tmp/postgres.log"
	if [ ${#as_pg[@]} -gt 0 ]; then
		chown postgres: "$tmp/postgres.log"
	fi
	if pg "$pgbin/pg_ctl" -D "$tmp/data" -l "$tmp/postgres.log" -w -t 60 \
		-o "-p $candidate -k $tmp -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" \
		start >/dev/null 2>&1; then
		started=1
		port="$candidate"
		break
	fi
	if ! grep -q "could not bind\|could not create any TCP/IP sockets\|Address already in use" "$tmp/postgres.log"; then
		cat "$tmp/postgres.log" >&2
		echo "with-postgres: PostgreSQL failed to start" >&2
		exit 1
	fi
done
if [ -z "$port" ]; then
	cat "$tmp/postgres.log" >&2
	echo "with-postgres: could not find a free port for PostgreSQL" >&2
	exit 1
fi

ready=""
for _ in $(seq 1 300); do
	if "$pgbin/pg_isready" -q -h 127.0.0.1 -p "$port" -U postgres -d postgres; then
		ready=1
		break
	fi
	sleep 0.1
done
if [ -z "$ready" ]; then
	cat "$tmp/postgres.log" >&2
	echo "with-postgres: PostgreSQL on port $port did not become ready" >&2
	exit 1
fi

export TEST_DATABASE_URL="postgres://postgres@127.0.0.1:$port/postgres?sslmode=disable"
echo "with-postgres: PostgreSQL $("$pgbin/postgres" --version | awk '{print $3}') on 127.0.0.1:$port" >&2

status=0
"$@" || status=$?
exit "$status"
