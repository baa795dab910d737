#!/usr/bin/env bash
# Runs every Go fuzz target of the module for a bounded time each
# (FUZZTIME, default 10s). Seeds that found bugs live in each package's
# testdata/fuzz and run in every `make test` as ordinary tests.
set -euo pipefail
cd "$(dirname "$0")/.."
FUZZTIME=${FUZZTIME:-10s}
out=$(mktemp)
trap 'rm -f "$out"' EXIT

# corpus lists the failing inputs go test has saved for a target.
corpus() { ls "$1/testdata/fuzz/$2" 2>/dev/null | sort; }

# fuzz runs one target. The Go fuzzing engine sometimes ends a run at its
# -fuzztime deadline with "context deadline exceeded" and no failing input
# (a worker was still busy when the coordinator stopped); that run is
# repeated once. A run that saved a failing input fails at once.
fuzz() {
  local pkg=$1 name=$2 try before
  for try in 1 2; do
    before=$(corpus "$pkg" "$name")
    if go test -run '^$' -fuzz "^${name}\$" -fuzztime "$FUZZTIME" -fuzzminimizetime 5s "$pkg" >"$out" 2>&1; then
      tail -n 3 "$out"
      return 0
    fi
    cat "$out"
    if [ "$(corpus "$pkg" "$name")" != "$before" ] || ! grep -q 'context deadline exceeded' "$out" || [ "$try" = 2 ]; then
      return 1
    fi
    echo "fuzz: $pkg $name stopped at its deadline with no failing input (Go fuzzing engine); running it once more"
  done
}

status=0
while IFS=: read -r file name; do
  pkg=./$(dirname "$file")
  echo "== fuzz $pkg $name ($FUZZTIME)"
  if ! fuzz "$pkg" "$name"; then
    echo "FUZZ FAILED: $pkg $name (a failing input, if any, is in $pkg/testdata/fuzz/$name)" >&2
    status=1
  fi
done < <(git ls-files '*_test.go' | xargs grep -Ho '^func Fuzz[A-Za-z0-9_]*' | sed 's/:func /:/' | sort -u)
exit $status
