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
# The node tests run containerd, runc, crictl and the CNI plugins of the CRI rig (built once per
# machine by integration/cri/setup.sh, as make test-vm uses it); the guest reads them under /host.
CRI=$ROOT/integration/cri
# shellcheck source=../vm/product.sh
. "$ROOT/integration/vm/product.sh" # rig_built
if ! rig_built "$CRI"; then
  echo "test-sriov: building the CRI rig (integration/cri/setup.sh)" >&2
  if ! flock /var/lock/rail-rig-build.lock bash "$CRI/setup.sh" >"$BIN/cri-setup.log" 2>&1; then
    tail -20 "$BIN/cri-setup.log" >&2
    echo "test-sriov: the CRI rig could not be built" >&2
    verdict 125
    exit 125
  fi
fi
CRI_RIG=$(bash -c '. "$1/lib.sh" && echo "$RIG_DIR"' _ "$CRI")
set +e
# One rig at a time on this machine (two TCG guests on 2 cores time out). A test that hangs makes
# the test binary print every goroutine's stack and exit within the boot's 600 s.
SRIOV_RIG_HOST=1 flock /tmp/rail-rig.lock bash "$HERE/run.sh" env RAIL_SRIOV_GUEST=1 RAIL_SRIOV_BIN="/host$BIN" RAIL_SRIOV_REPO="/host$ROOT" \
  RAIL_SRIOV_CRI_RIG="/host$CRI_RIG" "/host$BIN/sriov.test" -test.v -test.count=1 -test.timeout=400s "$@"
rc=$?
set -e
verdict "$rc"
exit "$rc"
