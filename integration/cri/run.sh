#!/usr/bin/env bash
# Rail's CRI end-to-end test: builds (or reuses) the rig, then runs the Go test against the
# repository's bin/ (make build). Needs root. Used by `make test-cri` (and .ci/run through it).
#   exit 125: the rig could not be set up (e.g. a module download was refused); the test did not run
#   RAIL_RIG_CACHE         rig cache root (default /var/cache/rail-rig)
#   RAIL_BIN               where raild and rail are (default <repo>/bin)
#   RAIL_CRI_VERDICT_FILE  write the exit code there too: make turns every failure into 2, so a
#                          caller behind make reads 125 (rig failure) from a test's failure there
set -euo pipefail
trap 'rc=$?; [ -z "${RAIL_CRI_VERDICT_FILE:-}" ] || echo "$rc" >"$RAIL_CRI_VERDICT_FILE"' EXIT
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
[ "$(id -u)" = 0 ] || { echo "run.sh needs root" >&2; exit 1; }
for b in raild rail; do
  [ -x "${RAIL_BIN:-$REPO/bin}/$b" ] || { echo "${RAIL_BIN:-$REPO/bin}/$b missing: run make build" >&2; exit 1; }
done
t0=$(date +%s)
if ! out=$("$HERE/setup.sh"); then # its progress (stderr) goes straight through
  echo "$out" | tail -40 >&2
  echo "the CRI rig could not be set up: the test did not run" >&2
  exit 125
fi
RIG=$(echo "$out" | tail -1)
echo "rig: $RIG (setup $(( $(date +%s) - t0 ))s)"
cd "$REPO"
RAIL_CRI_RIG=$RIG go test -count=1 -v -timeout 15m ./integration/cri/ "$@"
