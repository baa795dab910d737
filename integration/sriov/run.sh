#!/usr/bin/env bash
# SR-IOV VM rig: boots Debian's 7.3.4 kernel under QEMU 10 (TCG) on a q35 machine with three
# emulated Intel 82576 NICs (QEMU `igb`, SR-IOV capable, up to 7 VFs each) in a PCIe topology, and runs
# CMD in the guest as root (its stdout/stderr are run.sh's, its exit code run.sh's).
#
#   sudo ./run.sh CMD [ARGS...]          e.g. ./run.sh bash /run/sriov-rig/tests/all.sh
#
#   pcie.0 ─┬─ rp1 (pcie-root-port, chassis 1) ─┬─ 00.0 pf0: igb  ─┐
#           │                                    └─ 00.1 gpu0: bochs-display (class 0x0300)
#           └─ rp2 (pcie-root-port, chassis 2) ── sw0: x3130-upstream
#                   ├─ sw0p0 (xio3130-downstream, chassis 3) ── pf1: igb ─┼─ QEMU hub 0 (one "wire"
#                   ├─ sw0p1 (xio3130-downstream, chassis 4) ── pf2: igb ─┘  that nothing else joins)
#                   └─ sw0p2 (xio3130-downstream, chassis 5) ── gpu1: bochs-display (class 0x0300)
#
# gpu0 and gpu1 are display-class PCI functions with no driver (the guest has no udev to load
# one): the GPUs' places in the real PCIe tree, gpu0 beside pf0 under its root port, gpu1 behind
# the switch with pf1 and pf2. The product tests bind them to a stand-in for the nvidia driver.
#
# The guest's / is the rig's trixie root (read-only 9p + tmpfs overlay: iproute2 6.15, rdma-core 56,
# perftest). This directory's tests/ is at /run/sriov-rig/tests in the guest; files the job writes
# under /run/sriov-rig/out come back in the run directory (kept with SRIOV_RIG_KEEP=1).
#
# Environment:
#   SRIOV_RIG_CACHE      cache root (default /var/cache/rail-rig/sriov; see setup.sh)
#   SRIOV_RIG_MEM        guest MiB (default 1536)        SRIOV_RIG_CPUS  vCPUs (default 2)
#   SRIOV_RIG_TIMEOUT    seconds for the whole boot (default 600)
#   SRIOV_RIG_START_TIMEOUT  seconds the guest may take to reach its job (default 300); one that
#                        does not is booted once more, then the rig failed (125)
#   SRIOV_RIG_APPEND     more kernel command line (e.g. ib_core.netns_mode=0)
#   SRIOV_RIG_HOST=1     also share the host's / read-only at /host in the guest (test binaries)
#   SRIOV_RIG_ACCEL      tcg (default) or kvm
#   SRIOV_RIG_WAIT       seconds to wait for another QEMU on this machine to end before booting
#                        (default 900; two TCG guests on 2 cores make both time out); 0 = don't wait
#   SRIOV_RIG_KEEP=1     keep the run directory (kernel console, dmesg, out/)
# Exit code: CMD's; 124 the boot timed out; 125 the rig failed (no exit code from the guest).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=setup.sh
. "$HERE/setup.sh"

say() { echo "sriov-rig: $*" >&2; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN{printf "%.1fs", b-a}'; }
[ $# -gt 0 ] || { say "usage: $0 CMD [ARGS...]"; exit 2; }

RUN=
QPID=
cleanup() {
  local rc=$?
  [ -n "$QPID" ] && kill "$QPID" 2>/dev/null || true
  if [ -n "$RUN" ]; then
    if [ "${SRIOV_RIG_KEEP:-0}" = 1 ]; then say "run directory kept: $RUN"; else rm -rf "$RUN"; fi
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

T0=$(now)
ensure_rig
say "rig $RIG_DIR ready ($(since "$T0")): $(tr '\n' ' ' <"$RIG_DIR/versions.txt")"

# Another QEMU (another rig's VM) on this 2-core machine: wait for it to end.
wait_for_other_vms() {
  local limit=${SRIOV_RIG_WAIT:-900} waited=0
  while pgrep -a qemu-system >/dev/null; do
    if [ "$waited" -ge "$limit" ]; then
      say "another QEMU is still running after ${limit}s; booting anyway"
      return
    fi
    [ $((waited % 60)) = 0 ] && say "another QEMU is running, waiting: $(pgrep -a qemu-system | head -1 | cut -c1-100)"
    sleep 10
    waited=$((waited + 10))
  done
}

RUN=$(mktemp -d "$RIG_CACHE/run.XXXXXX")
mkdir -p "$RUN/out"
cp "$HERE/guest/stage2" "$RUN/stage2"
[ -d "$HERE/tests" ] && cp -r "$HERE/tests" "$RUN/tests"
{
  echo 'set -u'
  printf 'cd /run/sriov-rig\nexec'
  printf ' %q' "$@"
  echo
} >"$RUN/job"

case ${SRIOV_RIG_ACCEL:-tcg} in
  tcg) ACCEL=(-accel tcg,thread=multi -cpu max) ;;
  kvm) ACCEL=(-accel kvm -cpu host) ;;
  *) rig_fail "SRIOV_RIG_ACCEL=$SRIOV_RIG_ACCEL: want tcg or kvm" ;;
esac
# Paths as QEMU sees them: it runs chrooted in $RIG_ROOT, with the run directory bound at
# /run/sriov-rig and $RIG_DIR/boot at /boot/sriov-rig.
QEMU_ARGS=(
  -nodefaults -no-user-config -no-reboot -display none
  -machine q35 "${ACCEL[@]}" -smp "${SRIOV_RIG_CPUS:-2}" -m "${SRIOV_RIG_MEM:-1536}"
  -kernel /boot/sriov-rig/vmlinux -initrd "/boot/sriov-rig/${RIG_INITRD##*/}"
  -append "console=ttyS0 loglevel=4 panic=-1 mitigations=off pci=noari ${SRIOV_RIG_APPEND:-}"
  -chardev file,id=kcon,path=/run/sriov-rig/console.log -serial chardev:kcon
  -chardev stdio,id=jobout,signal=off -serial chardev:jobout
  -fsdev local,id=rootfs,path=/,security_model=none,readonly=on,multidevs=remap
  -device virtio-9p-pci,fsdev=rootfs,mount_tag=rootfs,bus=pcie.0,addr=0x2
  -fsdev local,id=jobfs,path=/run/sriov-rig,security_model=none
  -device virtio-9p-pci,fsdev=jobfs,mount_tag=jobfs,bus=pcie.0,addr=0x3
  # PCIe topology: pf0 on a root port; pf1, pf2 behind a switch on another root port
  -device pcie-root-port,id=rp1,bus=pcie.0,addr=0x4,chassis=1,slot=1
  -device igb,id=pf0,bus=rp1,addr=0x0.0,multifunction=on,netdev=wire0,mac=52:54:00:5a:00:00,romfile=
  -device bochs-display,id=gpu0,bus=rp1,addr=0x0.1,vgamem=4M,romfile=
  -device pcie-root-port,id=rp2,bus=pcie.0,addr=0x5,chassis=2,slot=2
  -device x3130-upstream,id=sw0,bus=rp2
  -device xio3130-downstream,id=sw0p0,bus=sw0,addr=0x0,chassis=3,slot=0
  -device igb,id=pf1,bus=sw0p0,netdev=wire1,mac=52:54:00:5a:00:01,romfile=
  -device xio3130-downstream,id=sw0p1,bus=sw0,addr=0x1,chassis=4,slot=0
  -device igb,id=pf2,bus=sw0p1,netdev=wire2,mac=52:54:00:5a:00:02,romfile=
  -device xio3130-downstream,id=sw0p2,bus=sw0,addr=0x2,chassis=5,slot=0
  -device bochs-display,id=gpu1,bus=sw0p2,vgamem=4M,romfile=
  -netdev hubport,id=wire0,hubid=0 -netdev hubport,id=wire1,hubid=0 -netdev hubport,id=wire2,hubid=0
)
if [ "${SRIOV_RIG_HOST:-0}" = 1 ]; then
  QEMU_ARGS+=(-fsdev local,id=hostfs,path=/host,security_model=none,readonly=on,multidevs=remap
    -device virtio-9p-pci,fsdev=hostfs,mount_tag=hostfs,bus=pcie.0,addr=0x6)
fi
printf '%q ' qemu-system-x86_64 "${QEMU_ARGS[@]}" >"$RUN/qemu-cmdline.txt"

# boot: one boot of the guest, QEMU's exit code in qrc. A guest that has not reached its job
# (stage2 writes uptime-at-job first) SRIOV_RIG_START_TIMEOUT seconds after QEMU started is stopped:
# its boot failed (TCG under load: a guest silent before init, QEMU stuck before the kernel printed
# a line), and the rig boots it once more below, as the VM and fabric rigs do.
boot() {
  rm -f "$RUN/rc" "$RUN/uptime-at-job" "$RUN/console.log"
  wait_for_other_vms
  say "boot: $VM_KERNEL_ABI, ${SRIOV_RIG_ACCEL:-tcg}, ${SRIOV_RIG_CPUS:-2} vCPU, ${SRIOV_RIG_MEM:-1536} MiB ${SRIOV_RIG_APPEND:-}"
  TB=$(now)
  # QEMU runs chrooted in the trixie root, in a private mount namespace that binds what it needs in;
  # unshare and sh exec into chroot and QEMU, so $QPID (timeout's child) is QEMU itself.
  set +e
  timeout -k 5 "${SRIOV_RIG_TIMEOUT:-600}" unshare -m --propagation private -- sh -c '
    r=$1 run=$2 boot=$3 host=$4
    shift 4
    set -e
    if [ "$host" = 1 ]; then mount --rbind / "$r/host"; mount -o remount,bind,ro "$r/host"; fi
    mount -t proc proc "$r/proc"
    mount --rbind /dev "$r/dev"
    mount --bind "$run" "$r/run/sriov-rig"
    mount --bind "$boot" "$r/boot/sriov-rig"
    exec chroot "$r" /usr/bin/qemu-system-x86_64 "$@"' sh \
    "$RIG_ROOT" "$RUN" "$RIG_DIR/boot" "${SRIOV_RIG_HOST:-0}" "${QEMU_ARGS[@]}" </dev/null &
  QPID=$!
  watch_start "$QPID"
  wait "$QPID"
  qrc=$?
  QPID=
  set -e
  say "qemu exited $qrc after $(since "$TB") (guest job started at uptime $(cat "$RUN/uptime-at-job" 2>/dev/null || echo ?)s); total $(since "$T0")"
}

# watch_start PID: stops QEMU (PID, the timeout wrapper) when the guest has not reached its job in
# time, instead of waiting for the whole boot's timeout.
watch_start() {
  local pid=$1 waited=0 limit=${SRIOV_RIG_START_TIMEOUT:-300}
  while kill -0 "$pid" 2>/dev/null && [ ! -e "$RUN/uptime-at-job" ]; do
    if [ "$waited" -ge "$limit" ]; then
      say "the guest did not reach its job within ${limit}s: stopping qemu"
      kill "$pid" 2>/dev/null || true
      return
    fi
    sleep 1
    waited=$((waited + 1))
  done
}

qrc=0
boot
if [ ! -s "$RUN/rc" ] && [ ! -e "$RUN/uptime-at-job" ]; then
  say "the guest never reached its job (a rig failure, not a test's); kernel console:"
  tail -40 "$RUN/console.log" >&2 || true
  say "booting once more"
  boot
  if [ ! -e "$RUN/uptime-at-job" ]; then
    say "the guest never reached its job, twice: the rig could not be set up; kernel console:"
    tail -40 "$RUN/console.log" >&2 || true
    exit 125
  fi
fi
if [ -s "$RUN/rc" ]; then
  exit "$(cat "$RUN/rc")"
fi
say "the guest reported no exit code; kernel console:"
tail -40 "$RUN/console.log" >&2 || true
[ "$qrc" = 124 ] && exit 124
exit 125
