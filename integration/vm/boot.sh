# Sourced by run.sh: one boot of the guest that runs the test binary in one RDMA netns mode.
# Expects HERE, REPO, KDIR, INITRD, RUN, VM_KERNEL_ABI and the say/fail helpers of run.sh.

# RDMA netns mode per boot, as ib_core's netns_mode parameter on the kernel command line (modprobe
# applies ib_core.* from /proc/cmdline when the module loads, as it would on a configured node).
boot_cmdline() {
  case $1 in
    shared) echo "" ;;
    exclusive) echo "ib_core.netns_mode=0" ;;
    *) fail "unknown boot $1: want shared or exclusive" ;;
  esac
}

# write_job BOOT TESTBIN ARGS...: the run directory the guest mounts at /run/rail-vm. TESTBIN
# --exec runs ARGS as a command instead of the test binary.
write_job() {
  local boot=$1 testbin=$2 dir=$RUN/$1
  shift 2
  mkdir -p "$dir"
  cp "$HERE/guest/stage2" "$dir/stage2"
  printf 'RAIL_VM_KVER=%q\nRAIL_VM_MODULES=%q\n' "$VM_KERNEL_ABI" "$KDIR/root/usr/lib/modules/$VM_KERNEL_ABI" >"$dir/job.env"
  {
    echo 'set -u'
    echo 'modprobe -a rdma_rxe ib_uverbs rdma_ucm ib_umad veth macvlan ipvlan virtio_net || exit 125'
    # the guest's one NIC: virtio-net on a QEMU hub with no other port, so nothing leaves the VM
    echo 'RAIL_VM_NIC=$(ls /sys/bus/virtio/drivers/virtio_net/*/net/ 2>/dev/null | head -1)'
    printf 'cd %q\n' "$HERE"
    printf 'export RAIL_VM_NIC RAIL_VM_GUEST=1 RAIL_VM_BOOT=%q\n' "$boot"
    # the product's binaries and the CRI rig (product.sh), at their host paths
    printf 'export RAIL_VM_RAIL_BIN=%q RAIL_VM_CRI_RIG=%q RAIL_VM_CRI_TOOLS=%q\n' \
      "${RAIL_VM_RAIL_BIN:-}" "${RAIL_VM_CRI_RIG:-}" "${RAIL_VM_CRI_TOOLS:-}"
    if [ "$testbin" = --exec ]; then
      printf 'exec'
    else
      printf 'exec %q -test.v -test.count=1 -test.timeout=%ss' "$testbin" "$((${RAIL_VM_TIMEOUT:-900} - 30))"
    fi
    printf ' %q' "$@"
    echo
  } >"$dir/job"
}

qemu_accel_args() {
  case ${RAIL_VM_ACCEL:-tcg} in
    tcg) echo "-accel tcg,thread=multi -cpu max" ;;
    kvm) echo "-accel kvm -cpu host" ;;
    *) fail "RAIL_VM_ACCEL=${RAIL_VM_ACCEL}: want tcg or kvm" ;;
  esac
}

# boot_vm BOOT TESTBIN ARGS...: returns the test binary's exit code; 124 on timeout, 125 when the
# guest never reported one. A guest that has not started its job RAIL_VM_START_TIMEOUT seconds
# (default 300) after qemu started is stopped: its boot failed (see job_started).
boot_vm() {
  local boot=$1 kernel=$KDIR/vmlinux dir=$RUN/$1 qrc=0 qpid
  rm -rf "$dir"
  write_job "$@"
  [ -s "$kernel" ] || kernel=$KDIR/root/usr/lib/modules/$VM_KERNEL_ABI/vmlinuz
  say "boot $boot: $VM_KERNEL_ABI, ${RAIL_VM_ACCEL:-tcg}, ${RAIL_VM_CPUS:-2} vCPU, ${RAIL_VM_MEM:-1024} MiB $(boot_cmdline "$boot")"
  # shellcheck disable=SC2046
  timeout -k 5 "${RAIL_VM_TIMEOUT:-900}" qemu-system-x86_64 -nodefaults -no-user-config -no-reboot \
    -machine pc $(qemu_accel_args) -smp "${RAIL_VM_CPUS:-2}" -m "${RAIL_VM_MEM:-1024}" -display none \
    -kernel "$kernel" -initrd "$INITRD" \
    -append "console=ttyS0 loglevel=4 panic=-1 mitigations=off $(boot_cmdline "$boot")" \
    -chardev "file,id=kcon,path=$dir/console.log" -serial chardev:kcon \
    -chardev stdio,id=jobout,signal=off -serial chardev:jobout \
    -fsdev local,id=hostfs,path=/,security_model=none,readonly=on,multidevs=remap \
    -device virtio-9p-pci,fsdev=hostfs,mount_tag=hostfs \
    -fsdev "local,id=jobfs,path=$dir,security_model=none" \
    -device virtio-9p-pci,fsdev=jobfs,mount_tag=jobfs \
    -netdev hubport,id=nic0,hubid=0 -device virtio-net-pci,netdev=nic0 </dev/null &
  qpid=$!
  watch_start "$dir" "$qpid"
  wait "$qpid" || qrc=$?
  if [ -s "$dir/rc" ]; then
    return "$(cat "$dir/rc")"
  fi
  say "boot $boot: the guest reported no exit code (qemu exit $qrc); kernel console:"
  tail -30 "$dir/console.log" >&2 || true
  [ "$qrc" = 124 ] && return 124
  return 125
}

# job_started BOOT: whether the guest of the last boot_vm BOOT reached its job (stage2 writes
# uptime-at-job first). A boot that never did is the rig failing (TCG under load: a guest silent
# before init, a kernel crash at boot), not a test: run.sh boots it once more.
job_started() { [ -e "$RUN/$1/uptime-at-job" ]; }

# watch_start DIR PID: stops qemu (PID, the timeout wrapper) when the guest has not started its job
# in time, instead of waiting for the whole boot's timeout.
watch_start() {
  local dir=$1 pid=$2 waited=0 limit=${RAIL_VM_START_TIMEOUT:-300}
  while kill -0 "$pid" 2>/dev/null && [ ! -e "$dir/uptime-at-job" ]; do
    if [ "$waited" -ge "$limit" ]; then
      say "the guest did not start its job within ${limit}s: stopping qemu"
      kill "$pid" 2>/dev/null || true
      return
    fi
    sleep 1
    waited=$((waited + 1))
  done
}
