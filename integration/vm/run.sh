#!/usr/bin/env bash
# Rail's Soft-RoCE VM rig. Boots Debian's own kernel under QEMU with rdma_rxe and runs the Go tests
# of integration/vm inside it, as root, once per RDMA netns mode:
#   boot "shared"     ib_core loaded with its default (netns_mode=1)
#   boot "exclusive"  the kernel booted with ib_core.netns_mode=0
# so pkg/topology, pkg/rdma and pkg/attach meet a real /sys/class/infiniband, real uverbs/rdma_cm
# device nodes, real RDMA netns modes and real RDMA traffic, which the build host's kernel lacks.
#
#   sudo integration/vm/run.sh [test binary flags]      e.g. -test.run 'TestDiscover|TestFakesys'
#   sudo integration/vm/run.sh --exec CMD [ARGS...]     run CMD in the guest instead (debugging)
#
# Environment:
#   RAIL_VM_CACHE    cache root (default /var/cache/rail-vm); the kernel lives in a directory named after
#                    the pins in versions.env, so a machine fetches it once
#   RAIL_VM_BOOTS    the boots to run (default "shared exclusive")
#   RAIL_VM_ACCEL    tcg (default) or kvm
#   RAIL_VM_MEM      guest MiB (default 1024)      RAIL_VM_CPUS  guest vCPUs (default 2)
#   RAIL_VM_TIMEOUT  seconds per boot (default 900)
#   RAIL_VM_START_TIMEOUT  seconds a guest may take to start its test job (default 300); one that
#                    never does is booted once more, then counts as a rig failure (125)
#   RAIL_VM_KEEP=1   keep the run directory (kernel console and dmesg of each boot)
#   RAIL_VM_VERDICT_FILE  write the exit code there too (for callers going through make)
#   RAIL_VM_MIRROR   Debian mirror (default: the host's apt mirror, else http://deb.debian.org/debian)
# Exit code: 0 when every boot passed, else the first failing test exit code; 124 a boot timed out;
# 125 the rig itself failed (also: a guest that twice never reached its test job). Nothing is installed on the host but Debian packages (qemu, busybox, ...).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
# shellcheck source=versions.env
. "$HERE/versions.env"

CACHE_ROOT=${RAIL_VM_CACHE:-/var/cache/rail-vm}
KDIR=$CACHE_ROOT/linux-${VM_KERNEL_ABI}_${VM_KERNEL_VERSION}
BOOTS=${RAIL_VM_BOOTS:-shared exclusive}
GO=${GO:-$(command -v go || echo /usr/local/go/bin/go)}

say() { echo "rail-vm: $*" >&2; }
# on_exit RC: drops (or keeps) the run directory; with RAIL_VM_VERDICT_FILE, writes RC there, so a
# caller behind make (which turns every failure into 2) can tell a rig failure (125) from a test's.
on_exit() {
  if [ -n "${RUN:-}" ]; then
    if [ "${RAIL_VM_KEEP:-0}" = 1 ]; then say "run directory kept: $RUN"; else rm -rf "$RUN"; fi
  fi
  if [ -n "${RAIL_VM_VERDICT_FILE:-}" ]; then echo "$1" >"$RAIL_VM_VERDICT_FILE"; fi
}
RUN=
trap 'on_exit $?' EXIT
fail() { say "error: $*"; exit 125; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN{printf "%.1fs", b-a}'; }

[ "$(id -u)" = 0 ] || fail "needs root (qemu's 9p shares the host's / read-only; apt installs)"
# shellcheck source=setup.sh
. "$HERE/setup.sh"
# shellcheck source=boot.sh
. "$HERE/boot.sh"
# shellcheck source=product.sh
. "$HERE/product.sh"

for boot in $BOOTS; do boot_cmdline "$boot" >/dev/null; done # refuses unknown boots before any work
T_ALL=$(now)
t=$(now); ensure_packages; say "packages ready ($(since "$t"))"
mkdir -p "$CACHE_ROOT"
exec 8>"$CACHE_ROOT/.lock"
flock 8
t=$(now); ensure_kernel; say "kernel $VM_KERNEL_ABI $VM_KERNEL_VERSION ready in $KDIR ($(since "$t"))"
t=$(now); INITRD=$(ensure_initramfs); say "initramfs $INITRD ($(since "$t"))"
flock -u 8

RUN=$(mktemp -d "${TMPDIR:-/tmp}/rail-vm.XXXXXX")
if [ "${1:-}" = --exec ]; then
  shift
  [ $# -gt 0 ] || fail "--exec needs a command"
  TESTBIN=--exec
else
  t=$(now)
  TESTBIN=$RUN/rail-vm.test
  (cd "$REPO" && CGO_ENABLED=0 "$GO" test -c -o "$TESTBIN" ./integration/vm) ||
    fail "go test -c ./integration/vm failed"
  say "test binary built ($(since "$t"))"
  t=$(now); ensure_product; say "raild, rail and the CRI rig ready ($(since "$t"))"
fi

verdict=0
for boot in $BOOTS; do
  t=$(now)
  set +e
  boot_vm "$boot" "$TESTBIN" "$@"
  rc=$?
  if [ "$rc" != 0 ] && ! job_started "$boot"; then
    say "boot $boot: the guest never reached its job (a rig failure, not a test's): booting once more"
    boot_vm "$boot" "$TESTBIN" "$@"
    rc=$?
    job_started "$boot" || rc=125
  fi
  set -e
  say "boot $boot: exit code $rc ($(since "$t"); guest job started at uptime $(cat "$RUN/$boot/uptime-at-job" 2>/dev/null || echo ?)s)"
  [ "$verdict" = 0 ] && verdict=$rc
done
say "total $(since "$T_ALL"), verdict $verdict"
exit "$verdict"
