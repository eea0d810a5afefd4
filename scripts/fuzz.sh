#!/usr/bin/env bash
# Runs every fuzz target of the module (docs/fuzzing.md), one after another,
# for FUZZTIME each (default 2s). Arguments, if any, are the packages to
# look in (default: every package with a Fuzz function in its tests);
# FUZZPARALLEL sets the fuzzing workers (default: go test's, GOMAXPROCS).
#
# Each package's test binary is built once, instrumented for fuzzing as
# `go test -fuzz` builds it (`go test -c -fuzz`), and then lists the
# package's targets and fuzzes each of them in turn, run as `go test -fuzz`
# runs it: from the package's folder (a failing input goes to its
# testdata/fuzz/<Target>/) with the go command's fuzz cache
# ($GOCACHE/fuzz/<import path>). A `go test -fuzz` per target would build
# and link the same binary again for every target.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
GO="${GO:-go}"
FUZZTIME="${FUZZTIME:-2s}"

packages=("$@")
if [ ${#packages[@]} -eq 0 ]; then
	# The packages whose tests declare a fuzz target, from the sources.
	mapfile -t packages < <(grep -rlE --include='*_test.go' '^func Fuzz[A-Za-z0-9_]*\(f \*testing\.F\)' . | xargs -n1 dirname | sort -u)
fi

parallel=()
if [ -n "${FUZZPARALLEL:-}" ]; then
	parallel=(-test.parallel "$FUZZPARALLEL")
fi
fuzzcache="$("$GO" env GOCACHE)/fuzz"

# corpus_files counts the inputs kept for a target (a finding adds one).
corpus_files() {
	if [ -d "$1" ]; then
		find "$1" -type f | wc -l
	else
		echo 0
	fi
}

out=$(mktemp)
bindir=$(mktemp -d)
trap 'rm -f "$out"; rm -rf "$bindir"' EXIT
status=0
# Each package's import path and folder, from one go list.
if [ ${#packages[@]} -eq 0 ]; then
	echo "fuzz: no package declares a fuzz target" >&2
	exit 1
fi
listing="$("$GO" list -f '{{.ImportPath}} {{.Dir}}' "${packages[@]}")" # a package that does not load stops the script
mapfile -t listed <<<"$listing"
for line in "${listed[@]}"; do
	importpath="${line%% *}"
	dir="${line#* }"
	pkg="$importpath"
	bin="$bindir/$(echo "$importpath" | tr '/' '_').test"
	if ! "$GO" test -c -fuzz . -o "$bin" "$pkg"; then
		echo "FAIL: $pkg does not build"
		status=1
		continue
	fi
	# The test binary names the targets the package really has.
	mapfile -t targets < <(cd "$dir" && "$bin" -test.list '^Fuzz' | grep '^Fuzz' || true)
	for target in "${targets[@]}"; do
		echo "== $pkg $target ($FUZZTIME) =="
		corpus="$dir/testdata/fuzz/$target"
		before=$(corpus_files "$corpus")
		if (cd "$dir" && "$bin" -test.paniconexit0 -test.run '^$' -test.fuzz "^${target}\$" -test.fuzztime "$FUZZTIME" \
			-test.fuzzcachedir "$fuzzcache/$importpath" "${parallel[@]}") 2>&1 | tee "$out"; [ "${PIPESTATUS[0]}" -eq 0 ]; then
			continue
		fi
		# Go's fuzzing coordinator may report "context deadline exceeded" as
		# -fuzztime ends on a busy machine (go.dev/issue/75804) without any
		# failing input: not a finding.
		if grep -q 'context deadline exceeded' "$out" && [ "$(corpus_files "$corpus")" -eq "$before" ]; then
			echo "NOTE: $pkg $target stopped with the fuzzing coordinator's deadline race (go.dev/issue/75804); no failing input"
			continue
		fi
		echo "FAIL: $pkg $target (the failing input is kept under $corpus)"
		status=1
	done
done
exit $status
