#!/usr/bin/env bash
# Runs every fuzz target of the module (docs/fuzzing.md), one after another,
# for FUZZTIME each (default 2s). Arguments, if any, are the packages to
# look in (default: every package with a Fuzz function in its tests);
# FUZZPARALLEL sets the fuzzing workers (default: go test's, GOMAXPROCS).
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
	parallel=(-parallel "$FUZZPARALLEL")
fi

status=0
for pkg in "${packages[@]}"; do
	# go test -list names the targets the package really has.
	mapfile -t targets < <("$GO" test -list '^Fuzz' "$pkg" | grep '^Fuzz' || true)
	for target in "${targets[@]}"; do
		echo "== $pkg $target ($FUZZTIME) =="
		if ! "$GO" test -run '^$' -fuzz "^${target}\$" -fuzztime "$FUZZTIME" "${parallel[@]}" "$pkg"; then
			echo "FAIL: $pkg $target (the failing input is kept under $pkg/testdata/fuzz/$target)"
			status=1
		fi
	done
done
exit $status
