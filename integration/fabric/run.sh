#!/usr/bin/env bash
# Rail's fabric rig: two nodes joined by wires. Boots two QEMU guests (node a and node b) on the
# Soft-RoCE VM rig's kernel, each a whole node (containerd + NRI + runc, raild on the guest's real
# sysfs with two GPU stand-ins in its PCIe tree, the CNI chain, pods from crictl), each with two
# NICs: rail 0 and rail 1, each NIC on its own wire to the same rail of the other node (QEMU dgram
# netdevs between two UDP ports of 127.0.0.1: nothing reaches the host's network). Then runs this
# package's Go tests on the host; they drive both guests through their job shares (guest.sh).
#
#   sudo integration/fabric/run.sh [test binary flags]     e.g. -test.run TestAcrossNodes
#
#   node (q35) pcie.0 ─┬─ rp0 ─┬─ 00.0 nic0: virtio-net ── wire of rail 0 ── the other node's nic0
#                      │       └─ 00.1 gpu0: bochs-display (GPU 0, PIX to nic0)
#                      └─ rp1 ─┬─ 00.0 nic1: virtio-net ── wire of rail 1 ── the other node's nic1
#                              └─ 00.1 gpu1: bochs-display (GPU 1, PIX to nic1)
#
# Environment:
#   RAIL_VM_CACHE           the VM rig's kernel cache (default /var/cache/rail-vm), shared with make test-vm
#   RAIL_FABRIC_MEM         guest MiB (default 1536)       RAIL_FABRIC_CPUS  vCPUs per guest (default 1)
#   RAIL_FABRIC_TIMEOUT     seconds for the whole run (default 1500)
#   RAIL_FABRIC_START_TIMEOUT  seconds a guest may take to reach its job (default 300); a guest that
#                           does not is booted once more, then the rig failed (125)
#   RAIL_FABRIC_PORT        first of the 8 UDP ports of 127.0.0.1 the wires use (default: picked)
#   RAIL_FABRIC_KEEP=1      keep the run directory (consoles, dmesg, raild and containerd logs)
#   RAIL_FABRIC_VERDICT_FILE  write the exit code there too (for .ci/run behind make)
# Exit code: the tests' (0 pass); 124 the run timed out; 125 the rig could not be set up.
set -euo pipefail
FABRIC=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$FABRIC/../.." && pwd)
HERE=$REPO/integration/vm # setup.sh and product.sh read their files from HERE
# shellcheck source=../vm/versions.env
. "$HERE/versions.env"
CACHE_ROOT=${RAIL_VM_CACHE:-/var/cache/rail-vm}
KDIR=$CACHE_ROOT/linux-${VM_KERNEL_ABI}_${VM_KERNEL_VERSION}
GO=${GO:-$(command -v go || echo /usr/local/go/bin/go)}

say() { echo "rail-fabric: $*" >&2; }
fail() { say "error: $*"; exit 125; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN{printf "%.1fs", b-a}'; }
RUN=
on_exit() {
  local rc=$1
  stop_guests
  if [ -n "$RUN" ]; then
    if [ "${RAIL_FABRIC_KEEP:-0}" = 1 ] || [ "$rc" != 0 ]; then say "run directory kept: $RUN"; else rm -rf "$RUN"; fi
  fi
  [ -z "${RAIL_FABRIC_VERDICT_FILE:-}" ] || echo "$rc" >"$RAIL_FABRIC_VERDICT_FILE"
}
trap 'on_exit $?' EXIT
trap 'exit 130' INT TERM

[ "$(id -u)" = 0 ] || fail "needs root (qemu's 9p shares the host's / read-only; apt installs)"
# shellcheck source=../vm/setup.sh
. "$HERE/setup.sh"
# shellcheck source=../vm/product.sh
. "$HERE/product.sh"
# shellcheck source=guest.sh
. "$FABRIC/guest.sh"

T_ALL=$(now)
# The VM rig's packages, plus the engines' tools the pods run (perftest's ib_write_bw, UCX's
# ucx_perftest); the guests read all of them at their host paths.
VM_PACKAGES="$VM_PACKAGES perftest ucx-utils"
eval "vm_$(declare -f packages_missing)"
packages_missing() { vm_packages_missing || ! command -v ib_write_bw >/dev/null || ! command -v ucx_perftest >/dev/null; }
t=$(now)
ensure_packages
say "packages ready ($(since "$t"))"
mkdir -p "$CACHE_ROOT"
exec 8>"$CACHE_ROOT/.lock"
flock 8
t=$(now); ensure_kernel; say "kernel $VM_KERNEL_ABI ready in $KDIR ($(since "$t"))"
t=$(now); INITRD=$(ensure_initramfs); say "initramfs $INITRD ($(since "$t"))"
flock -u 8
exec 8>&-

RUN=$(mktemp -d "${TMPDIR:-/tmp}/rail-fabric.XXXXXX")
t=$(now)
(cd "$REPO" && CGO_ENABLED=0 "$GO" test -c -o "$RUN/fabric.test" ./integration/fabric) ||
  { say "go test -c ./integration/fabric failed"; exit 1; }
say "test binary built ($(since "$t"))"
t=$(now); ensure_product; say "raild, rail and the CRI rig ready ($(since "$t"))"

t=$(now)
boot_guests || exit 125
say "both guests at their jobs ($(since "$t"))"
set +e
timeout -k 10 "${RAIL_FABRIC_TIMEOUT:-1500}" env RAIL_FABRIC_RUN="$RUN" RAIL_FABRIC_REPO="$REPO" \
  RAIL_FABRIC_BIN="$RAIL_VM_RAIL_BIN" RAIL_FABRIC_CRI_RIG="$RAIL_VM_CRI_RIG" RAIL_FABRIC_CRI_TOOLS="$RAIL_VM_CRI_TOOLS" \
  "$RUN/fabric.test" -test.v -test.count=1 -test.timeout="$((${RAIL_FABRIC_TIMEOUT:-1500} - 30))s" "$@"
rc=$?
set -e
say "tests: exit code $rc ($(since "$t") with the boots); total $(since "$T_ALL")"
exit "$rc"
