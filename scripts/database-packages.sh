#!/usr/bin/env bash
# Usage: scripts/database-packages.sh [-v]
#
# Prints, one a line, the packages of the module whose tests depend on which
# database they run on, that is the packages that `make test-postgres` runs
# again on PostgreSQL (the others do the same thing on either, and ran in the
# SQLite pass). A package is one when
#
#   - a Go file of its folder (its tests included, whatever their build tags)
#     calls testenv.Store, testenv.SeededStore, testenv.DatabaseURL or
#     testenv.IsPostgres, or reads TEST_DATABASE_URL itself; or
#   - its test binary imports another package of the module (a test helper)
#     whose non-test files do so.
#
# testenv is the only way a test reaches a database other than an SQLite file
# of its own (see testenv/testenv.go), so this covers every test whose outcome
# can differ on PostgreSQL. With -v it prints, on stderr, the packages left
# out.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
GO="${GO:-go}"

verbose=""
if [ "${1:-}" = "-v" ]; then
	verbose=1
fi

# What a file does when it reaches the test database.
pattern='testenv\.(Store|SeededStore|DatabaseURL|IsPostgres)\b|TEST_DATABASE_URL'

module="$("$GO" list -m)"
mapfile -t all < <("$GO" list -f '{{.ImportPath}} {{.Dir}}' ./...)
if [ ${#all[@]} -eq 0 ]; then
	echo "database-packages: go list found no packages" >&2
	exit 1
fi

declare -A selected=()
helpers=() # non-test packages (testenv aside) that reach the database for tests
for line in "${all[@]}"; do
	pkg="${line%% *}"
	dir="${line#* }"
	shopt -s nullglob
	files=("$dir"/*.go)
	shopt -u nullglob
	if [ ${#files[@]} -eq 0 ]; then
		continue
	fi
	if grep -qE "$pattern" "${files[@]}"; then
		selected["$pkg"]=1
	fi
	if [ "$pkg" != "$module/testenv" ]; then
		mapfile -t sources < <(printf '%s\n' "${files[@]}" | grep -v '_test\.go$' || true)
		if [ ${#sources[@]} -gt 0 ] && grep -qE "$pattern" "${sources[@]}"; then
			helpers+=("$pkg")
		fi
	fi
done

# The packages whose tests import such a helper: one go list of every test
# binary's dependencies (a test binary is the package main <pkg>.test; a
# dependency compiled again for it is listed as "<dep> [<pkg>.test]").
if [ ${#helpers[@]} -gt 0 ]; then
	testdeps="$("$GO" list -test -f '{{.ImportPath}}|{{join .Deps " "}}' ./...)" # a package that does not load stops the script
	while IFS='|' read -r testmain deps; do
		pkg="${testmain%.test}"
		if [ -n "${selected[$pkg]:-}" ]; then
			continue
		fi
		for h in "${helpers[@]}"; do
			if [[ " $deps " == *" $h "* || " $deps " == *" $h ["* ]]; then
				selected["$pkg"]=1
				break
			fi
		done
	done < <(grep '\.test|' <<<"$testdeps")
fi

for line in "${all[@]}"; do
	pkg="${line%% *}"
	if [ -n "${selected[$pkg]:-}" ]; then
		echo "$pkg"
	elif [ -n "$verbose" ]; then
		echo "database-packages: not on PostgreSQL: $pkg" >&2
	fi
done
