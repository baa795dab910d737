#!/usr/bin/env bash
# Rail on a real single-node Kubernetes: builds (or reuses) the rig, the fake GPU device plugin and
# Rail's image from bin/ (make build), then runs the Go test (kubectl and helm against the rig).
# Needs root. Used by `make test-k8s` (and .ci/run through it).
#   exit 125: the rig could not be set up (e.g. a module download was refused); the test did not run
#   RAIL_RIG_CACHE   rig cache root (default /var/cache/rail-rig)    RAIL_BIN   binaries (default <repo>/bin)
#   RAIL_K8S_VERDICT_FILE  write the exit code there too: make turns every failure into 2, so a
#                          caller behind make reads 125 (rig failure) from a test's failure there
set -euo pipefail
WORK=
# on_exit RC: drops the build directory and hands RC to a caller behind make.
on_exit() {
  [ -z "$WORK" ] || rm -rf "$WORK"
  [ -z "${RAIL_K8S_VERDICT_FILE:-}" ] || echo "$1" >"$RAIL_K8S_VERDICT_FILE"
}
trap 'on_exit $?' EXIT
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
[ "$(id -u)" = 0 ] || { echo "run.sh needs root" >&2; exit 1; }
BIN=${RAIL_BIN:-$REPO/bin}
for b in raild rail rail-ipam; do
  [ -x "$BIN/$b" ] || { echo "$BIN/$b missing: run make build" >&2; exit 1; }
done
t0=$(date +%s)
if ! out=$("$HERE/setup.sh" 2>&1); then
  echo "$out" | tail -40 >&2
  echo "the Kubernetes rig could not be set up: the test did not run" >&2
  exit 125
fi
CRI_RIG=$(echo "$out" | tail -2 | head -1); K8S_RIG=$(echo "$out" | tail -1)
# the thin Multus plugin and macvlan for TestMultus: a cache of their own (multus.env)
if ! out=$("$HERE/multus-setup.sh" 2>&1); then
  echo "$out" | tail -40 >&2
  echo "Multus could not be built: the test did not run" >&2
  exit 125
fi
MULTUS_RIG=$(echo "$out" | tail -1)
echo "rigs: $CRI_RIG $K8S_RIG $MULTUS_RIG (setup $(( $(date +%s) - t0 ))s)"
WORK=$(mktemp -d /tmp/rail-k8s-build.XXXXXX)
IMAGE=$(make -s -C "$REPO" image-name)
RAIL_BIN=$BIN "$HERE/build-image.sh" "$WORK/rail-image.tar" "$IMAGE"
(cd "$REPO" && CGO_ENABLED=0 go build -o "$WORK/fake-gpu-plugin" ./integration/cmd/fake-gpu-plugin)
(cd "$REPO" && CGO_ENABLED=0 go build -o "$WORK/fake-dra-nic-driver" ./integration/cmd/fake-dra-nic-driver)
cd "$REPO"
# tests against a real API server alone (no kubelet): the rig's etcd and kube-apiserver
RAIL_KAPI_BIN=$K8S_RIG/bin CGO_ENABLED=1 go test -race -count=1 -timeout 20m ./integration/kapi/...
RAIL_CRI_RIG=$CRI_RIG RAIL_K8S_RIG=$K8S_RIG RAIL_K8S_MULTUS=$MULTUS_RIG RAIL_K8S_IMAGE=$WORK/rail-image.tar RAIL_K8S_IMAGE_NAME=$IMAGE \
  RAIL_K8S_FAKEGPU=$WORK/fake-gpu-plugin RAIL_K8S_FAKEDRA=$WORK/fake-dra-nic-driver go test -count=1 -v -timeout 40m ./integration/k8s/ "$@"
