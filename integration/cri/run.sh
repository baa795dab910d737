#!/usr/bin/env bash
# Rail's CRI end-to-end test: builds (or reuses) the rig, then runs the Go test against the
# repository's bin/ (make build). Needs root. Used by `make test-cri`.
#   RAIL_RIG_CACHE   rig cache root (default /var/cache/rail-rig)
#   RAIL_BIN         where raild and rail are (default <repo>/bin)
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
[ "$(id -u)" = 0 ] || { echo "run.sh needs root" >&2; exit 1; }
for b in raild rail; do
  [ -x "${RAIL_BIN:-$REPO/bin}/$b" ] || { echo "${RAIL_BIN:-$REPO/bin}/$b missing: run make build" >&2; exit 1; }
done
t0=$(date +%s)
RIG=$("$HERE/setup.sh" | tail -1)
echo "rig: $RIG (setup $(( $(date +%s) - t0 ))s)"
cd "$REPO"
RAIL_CRI_RIG=$RIG go test -count=1 -v -timeout 15m ./integration/cri/ "$@"
