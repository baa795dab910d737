#!/usr/bin/env bash
# Runs every Go fuzz target of the module for a bounded time each
# (FUZZTIME, default 10s). Seeds that found bugs live in each package's
# testdata/fuzz and run in every `make test` as ordinary tests.
set -euo pipefail
cd "$(dirname "$0")/.."
FUZZTIME=${FUZZTIME:-10s}
status=0
while IFS=: read -r file name; do
  pkg=./$(dirname "$file")
  echo "== fuzz $pkg $name ($FUZZTIME)"
  if ! go test -run '^$' -fuzz "^${name}\$" -fuzztime "$FUZZTIME" -fuzzminimizetime 5s "$pkg"; then
    echo "FUZZ FAILED: $pkg $name (the failing input is in $pkg/testdata/fuzz/$name)" >&2
    status=1
  fi
done < <(git ls-files '*_test.go' | xargs grep -Ho '^func Fuzz[A-Za-z0-9_]*' | sed 's/:func /:/' | sort -u)
exit $status
