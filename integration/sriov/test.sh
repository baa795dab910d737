#!/usr/bin/env bash
# make test-sriov: builds this package's tests as a static binary on the host and runs them in the
# SR-IOV VM rig's guest (run.sh: QEMU 10 igb NICs, real VFs under igbvf), where vf mode's attach
# sequence and raild's VF sweep meet a real PF driver. Extra arguments go to the test binary
# (e.g. -test.run TestVFAttachDetachOnIGB).
#
# Exit code: the tests' (0 pass); 124 the boot timed out; 125 the rig could not be set up (cache,
# packages, QEMU): the tests did not run. With RAIL_SRIOV_VERDICT_FILE set the code is also written
# there (make reports every failure as 2; .ci/run reads the file).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
verdict() { [ -z "${RAIL_SRIOV_VERDICT_FILE:-}" ] || echo "$1" >"$RAIL_SRIOV_VERDICT_FILE"; }
BIN=$(mktemp -d /tmp/rail-sriov-test.XXXXXX)
trap 'rm -rf "$BIN"' EXIT
# The guest runs the host's static binaries: the tests, raild and the rail plugin.
if ! (cd "$ROOT" && CGO_ENABLED=0 go test -c -o "$BIN/sriov.test" ./integration/sriov &&
  CGO_ENABLED=0 go build -o "$BIN/raild" ./daemon && CGO_ENABLED=0 go build -o "$BIN/rail" ./plugins/rail); then
  verdict 1
  exit 1
fi
set +e
# One rig at a time on this machine (two TCG guests on 2 cores time out).
SRIOV_RIG_HOST=1 flock /tmp/rail-rig.lock bash "$HERE/run.sh" env RAIL_SRIOV_GUEST=1 RAIL_SRIOV_BIN="/host$BIN" "/host$BIN/sriov.test" -test.v -test.count=1 "$@"
rc=$?
set -e
verdict "$rc"
exit "$rc"
