#!/usr/bin/env bash
# make bench-sriov: rail-bench's VF scenario (integration/cmd/rail-bench --vf) in the SR-IOV rig's guest
# (run.sh: QEMU 10 igb PFs, real VFs under igbvf): rail in vf mode against sriov-cni + host-local on the
# same VFs of pf0, rounds alternating, with the exec floor and vf mode's kernel floor. Extra arguments go
# to rail-bench (e.g. --quick, or --rounds 30 --burst-reps 1; BENCH_FLAGS through make). RAIL_BASE=/path/to/rail
# adds that rail plugin (another build) as a side of its own: an A/B in one run.
#
# Upstream: SRIOV_CNI=/path/to/sriov (a sriov-cni binary, as nodes of the SR-IOV stack have in
# /opt/cni/bin); else sriov-cni.sh builds the pinned tag (sriov-cni.env) from its source once, cached
# outside the repo; where it has no source (no SRIOV_CNI_SRC and GitHub unreachable, as on CI) the bench
# says so and compares with host-device + static, which moves the VF by PCI address and sets nothing
# through the PF.
#
# Exit code: rail-bench's (0: measured, nothing leaked; it never fails on a time); 124 the boot timed
# out; 125 the rig could not be set up. With RAIL_SRIOV_BENCH_VERDICT_FILE set the code is also written
# there (make reports every failure as 2; .ci/run reads the file).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
say() { echo "bench-sriov: $*" >&2; }
verdict() { [ -z "${RAIL_SRIOV_BENCH_VERDICT_FILE:-}" ] || echo "$1" >"$RAIL_SRIOV_BENCH_VERDICT_FILE"; }
BIN=$(mktemp -d /tmp/rail-sriov-bench.XXXXXX)
trap 'rm -rf "$BIN"' EXIT
trap 'exit 130' INT TERM
# The guest has no Go toolchain: every binary it runs is built here, static.
build() { (cd "$1" && GOWORK=off CGO_ENABLED=0 GOFLAGS=-buildvcs=false go build -trimpath -o "$2" "${@:3}") || { verdict 1; exit 1; }; }
build "$ROOT" "$BIN/raild" ./daemon
build "$ROOT" "$BIN/rail" ./plugins/rail
build "$ROOT" "$BIN/cni-noop" ./integration/cmd/cni-noop
build "$ROOT" "$BIN/rail-bench" ./integration/cmd/rail-bench
# the upstream reference plugins at the version go.mod pins (as make bench builds them)
mod=$(cd "$ROOT" && go mod download -json github.com/containernetworking/plugins)
PLUGINS=$BIN/cni-plugins-$(jq -r .Version <<<"$mod") # its name says which in the table
mkdir -p "$PLUGINS"
build "$(jq -r .Dir <<<"$mod")" "$PLUGINS/" ./plugins/main/ptp ./plugins/ipam/host-local ./plugins/main/loopback \
  ./plugins/main/macvlan ./plugins/main/host-device ./plugins/ipam/static
upstream=()
# the binary goes where the guest sees it, in a directory whose name says which it is
take_sriov() { mkdir -p "$BIN/$2" && cp "$1" "$BIN/$2/sriov" && upstream=(--sriov-cni "/host$BIN/$2/sriov"); }
if [ -n "${SRIOV_CNI:-}" ]; then
  d=$(basename "$(dirname "$SRIOV_CNI")")
  case $d in sriov-cni*) ;; *) d=sriov-cni-given ;; esac
  take_sriov "$SRIOV_CNI" "$d"
  say "upstream: sriov-cni $SRIOV_CNI (SRIOV_CNI) + host-local"
else
  set +e
  sriov=$(bash "$HERE/sriov-cni.sh")
  rc=$?
  set -e
  case $rc in
    0) take_sriov "$sriov" "$(basename "$(dirname "$sriov")")"; say "upstream: sriov-cni $sriov + host-local" ;;
    3) say "WARNING: no sriov-cni (no SRIOV_CNI binary and no source for sriov-cni.sh): comparing with host-device + static instead" ;;
    *) verdict "$rc"; exit "$rc" ;;
  esac
fi
# An A/B in one run: RAIL_BASE=/path/to/rail, a rail plugin of another build, measured beside this tree's.
if [ -n "${RAIL_BASE:-}" ]; then
  cp "$RAIL_BASE" "$BIN/rail-base"
  upstream+=(--rail-base "/host$BIN/rail-base")
fi
# One rig at a time on this machine (two TCG guests on 2 cores time out).
set +e
SRIOV_RIG_HOST=1 flock /tmp/rail-rig.lock bash "$HERE/run.sh" bash "/host$HERE/bench-guest.sh" "/host$BIN" \
  "/host$PLUGINS" "${upstream[@]}" "$@"
rc=$?
set -e
verdict "$rc"
exit "$rc"
