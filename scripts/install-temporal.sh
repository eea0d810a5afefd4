#!/usr/bin/env bash
# Installs the Temporal CLI used by the tests (dev server) into bin/temporal of
# the repository, unless a v1.5.1 binary is already there. Quiet when nothing
# needs to be done.
set -euo pipefail

version=1.5.1
module=github.com/temporalio/cli

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="$repo/bin/temporal"

installed() {
	[ -x "$bin" ] || return 1
	local out
	# Release builds (and our own, see the -X flag below) print
	# "temporal version 1.5.1 (Server ..., UI ...)".
	out="$("$bin" --version 2>/dev/null || true)"
	if [[ $out =~ version\ v?${version//./\\.}([^0-9.]|$) ]]; then
		return 0
	fi
	# A plain "go install" build reports "0.0.0-DEV"; the module version is
	# still recorded in the binary's build information.
	out="$(go version -m "$bin" 2>/dev/null || true)"
	if [[ $out =~ mod[[:space:]]+${module//./\\.}[[:space:]]+v${version//./\\.}([[:space:]]|$) ]]; then
		return 0
	fi
	return 1
}

if installed; then
	exit 0
fi

echo "Installing Temporal CLI v$version into bin/temporal ..." >&2
mkdir -p "$repo/bin"
# Build into a scratch folder next to the target and move the result into
# place: "go install" refuses to overwrite a file that is not a Go binary, and
# a failed build must not leave a broken bin/temporal behind.
tmp="$(mktemp -d "$repo/bin/.temporal-install.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
GOBIN="$tmp" go install \
	-ldflags "-X $module/temporalcli.Version=$version" \
	"$module/cmd/temporal@v$version"
mv -f "$tmp/temporal" "$bin"

if ! installed; then
	echo "bin/temporal does not report version $version after installation" >&2
	exit 1
fi
"$bin" --version >&2
