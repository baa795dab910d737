#!/usr/bin/env bash
# Builds the Multus scenario's binaries into $RAIL_RIG_CACHE/multus-<sha256(multus.env, this script)>/bin:
# the thin Multus plugin (multus) and the macvlan main plugin, at the versions of multus.env. Separate from
# the kube and CRI rigs, so changing a pin here never rebuilds them. Takes /var/lock/rail-rig-build.lock like
# the other rig builds; a filled cache costs nothing. Prints the cache directory as its last line.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=multus.env
. "$HERE/multus.env"
GO=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
export GOTOOLCHAIN=${GOTOOLCHAIN:-local}
KEY=$(cat "$HERE/multus.env" "$0" | sha256sum | cut -c1-12)
DIR=${RAIL_RIG_CACHE:-/var/cache/rail-rig}/multus-$KEY
BIN=$DIR/bin
cached() { [ -x "$BIN/multus" ] && [ -x "$BIN/macvlan" ]; }
if ! cached; then
  mkdir -p "$DIR"
  exec 9>/var/lock/rail-rig-build.lock
  echo "waiting for /var/lock/rail-rig-build.lock (another rig build may hold it)"
  flock 9
fi
if ! cached; then
  t0=$(date +%s)
  tmp=$(mktemp -d "$DIR/.build.XXXXXX")
  # `go install …multus-cni.v4/cmd/multus@v` asks the proxy for a version list (deprecation check), which
  # it refuses for this module: build from a throwaway module whose only requirement is Multus, so
  # Multus keeps its own dependency pins.
  mkdir -p "$tmp/mod"
  printf 'module railrig/multus\n\ngo 1.26.0\n\nrequire gopkg.in/k8snetworkplumbingwg/multus-cni.v4 %s\n' \
    "$MULTUS_VERSION" > "$tmp/mod/go.mod"
  (cd "$tmp/mod" && CGO_ENABLED=0 GOFLAGS=-mod=mod nice -n "${RAIL_RIG_NICE:-10}" "$GO" build -trimpath \
    -ldflags "-s -w" -o "$tmp/multus" gopkg.in/k8snetworkplumbingwg/multus-cni.v4/cmd/multus)
  CGO_ENABLED=0 GOBIN=$tmp nice -n "${RAIL_RIG_NICE:-10}" "$GO" install -trimpath -ldflags "-s -w" \
    "github.com/containernetworking/plugins/plugins/main/macvlan@$MULTUS_CNI_PLUGINS"
  mkdir -p "$BIN"
  mv "$tmp/multus" "$tmp/macvlan" "$BIN/"
  rm -rf "$tmp"
  echo "multus: built in $(( $(date +%s) - t0 ))s" | tee -a "$DIR/build-times.txt"
fi
echo "$DIR"
