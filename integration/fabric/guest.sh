# Sourced by run.sh: boots and stops the rig's two guests. Expects REPO, HERE (integration/vm),
# FABRIC, KDIR, INITRD, RUN, VM_KERNEL_ABI and the say/fail/now/since helpers of run.sh.
#
# Each guest's run directory $RUN/<node> is its job share (/run/rail-vm in the guest, as the VM
# rig's stage2 expects). Its job (guest/agent) loads the RDMA modules, writes nics.txt (MAC,
# kernel name and PCI address of every NIC), touches ready, then runs every q/<n>.sh the tests drop
# there, each in the background, with its output in q/<n>.out and its exit code in q/<n>.rc; it
# ends when poweroff appears, and stage2 powers the guest off.

FABRIC_NODES="a b"
declare -A QPID=()

# node_index NODE: 1 for a, 2 for b (MACs, ports).
node_index() { case $1 in a) echo 1 ;; b) echo 2 ;; *) fail "unknown node $1" ;; esac; }

# wire_netdev NODE RAIL: the QEMU dgram netdev of NODE's NIC on RAIL: two UDP ports of 127.0.0.1
# per rail, node a sends to node b's and back.
wire_netdev() {
  local node=$1 rail=$2 base=$((FABRIC_PORT + 2 * $2)) lport rport
  if [ "$node" = a ]; then lport=$base rport=$((base + 1)); else lport=$((base + 1)) rport=$base; fi
  echo "dgram,id=wire$rail,local.type=inet,local.host=127.0.0.1,local.port=$lport,remote.type=inet,remote.host=127.0.0.1,remote.port=$rport"
}

# pick_port: the first of four free UDP ports of 127.0.0.1 (2 rails × 2 ends).
pick_port() {
  local p i busy
  for _ in $(seq 1 50); do
    p=$((20000 + (RANDOM % 4000) * 8))
    busy=0
    for i in 0 1 2 3; do
      ss -Hlun "sport = :$((p + i))" 2>/dev/null | grep -q . && busy=1
    done
    [ "$busy" = 0 ] && { echo "$p"; return; }
  done
  fail "no free UDP ports for the wires"
}

write_guest_job() {
  local node=$1 dir=$RUN/$1
  rm -rf "$dir"
  mkdir -p "$dir/q"
  cp "$HERE/guest/stage2" "$dir/stage2"
  printf 'RAIL_VM_KVER=%q\nRAIL_VM_MODULES=%q\n' "$VM_KERNEL_ABI" "$KDIR/root/usr/lib/modules/$VM_KERNEL_ABI" >"$dir/job.env"
  printf 'exec bash %q fabric-%s\n' "$FABRIC/guest/agent" "$node" >"$dir/job"
}

# boot_guest NODE: starts NODE's QEMU in the background ($QPID[NODE]).
boot_guest() {
  local node=$1 dir=$RUN/$1 i kernel=$KDIR/vmlinux accel
  i=$(node_index "$node")
  write_guest_job "$node"
  [ -s "$kernel" ] || kernel=$KDIR/root/usr/lib/modules/$VM_KERNEL_ABI/vmlinuz
  case ${RAIL_VM_ACCEL:-tcg} in
    tcg) accel="-accel tcg,thread=multi -cpu max" ;;
    kvm) accel="-accel kvm -cpu host" ;;
    *) fail "RAIL_VM_ACCEL=$RAIL_VM_ACCEL: want tcg or kvm" ;;
  esac
  # shellcheck disable=SC2086
  qemu-system-x86_64 -nodefaults -no-user-config -no-reboot -display none \
    -machine q35 $accel -smp "${RAIL_FABRIC_CPUS:-1}" -m "${RAIL_FABRIC_MEM:-1536}" \
    -kernel "$kernel" -initrd "$INITRD" \
    -append "console=ttyS0 loglevel=4 panic=-1 mitigations=off pci=noari no_timer_check" \
    -chardev "file,id=kcon,path=$dir/console.log" -serial chardev:kcon \
    -chardev "file,id=jobout,path=$dir/job.log" -serial chardev:jobout \
    -fsdev local,id=hostfs,path=/,security_model=none,readonly=on,multidevs=remap \
    -device virtio-9p-pci,fsdev=hostfs,mount_tag=hostfs,bus=pcie.0,addr=0x2 \
    -fsdev "local,id=jobfs,path=$dir,security_model=none" \
    -device virtio-9p-pci,fsdev=jobfs,mount_tag=jobfs,bus=pcie.0,addr=0x3 \
    -device pcie-root-port,id=rp0,bus=pcie.0,addr=0x4,chassis=1,slot=1 \
    -device "virtio-net-pci,bus=rp0,addr=0x0.0,multifunction=on,netdev=wire0,mac=52:54:00:fa:0$i:00,romfile=" \
    -device bochs-display,id=gpu0,bus=rp0,addr=0x0.1,vgamem=4M,romfile= \
    -device pcie-root-port,id=rp1,bus=pcie.0,addr=0x5,chassis=2,slot=2 \
    -device "virtio-net-pci,bus=rp1,addr=0x0.0,multifunction=on,netdev=wire1,mac=52:54:00:fa:0$i:01,romfile=" \
    -device bochs-display,id=gpu1,bus=rp1,addr=0x0.1,vgamem=4M,romfile= \
    -netdev "$(wire_netdev "$node" 0)" -netdev "$(wire_netdev "$node" 1)" \
    </dev/null >"$dir/qemu.log" 2>&1 &
  QPID[$node]=$!
  date +%s.%N >"$dir/qemu-start"
}

# guest_up NODE: whether NODE's agent said ready; guest_gone NODE: whether its QEMU ended.
guest_up() { [ -e "$RUN/$1/ready" ]; }
guest_gone() { ! kill -0 "${QPID[$1]}" 2>/dev/null; }

# boot_guests: boots both guests at once and waits for both agents; a guest that dies or does not
# reach its job in RAIL_FABRIC_START_TIMEOUT seconds (TCG under load: a guest silent before init, a
# kernel that panics at boot) is booted once more, alone. Returns 1 when a guest never comes up.
boot_guests() {
  local node limit=${RAIL_FABRIC_START_TIMEOUT:-300} pending
  declare -A tries=() started=()
  FABRIC_PORT=${RAIL_FABRIC_PORT:-$(pick_port)}
  say "booting nodes a and b: $VM_KERNEL_ABI, ${RAIL_VM_ACCEL:-tcg}, ${RAIL_FABRIC_CPUS:-1} vCPU, ${RAIL_FABRIC_MEM:-1536} MiB each; wires on 127.0.0.1:$FABRIC_PORT-$((FABRIC_PORT + 3))"
  for node in $FABRIC_NODES; do boot_guest "$node"; tries[$node]=1; started[$node]=$(date +%s); done
  while :; do
    pending=
    for node in $FABRIC_NODES; do
      guest_up "$node" && continue
      if [ -s "$RUN/$node/rc" ]; then
        say "node $node's job ended before it was ready (exit $(cat "$RUN/$node/rc")):"; cat "$RUN/$node/job.log" >&2; return 1
      fi
      if guest_gone "$node" || [ $(($(date +%s) - started[$node])) -ge "$limit" ]; then
        say "node $node did not reach its job (a rig failure, not a test's); console:"
        tail -15 "$RUN/$node/console.log" >&2 || true
        kill "${QPID[$node]}" 2>/dev/null || true
        wait "${QPID[$node]}" 2>/dev/null || true
        [ "${tries[$node]}" -ge 2 ] && return 1
        mv "$RUN/$node" "$RUN/$node.failed-boot-${tries[$node]}"
        say "booting node $node once more"
        boot_guest "$node"
        tries[$node]=$((tries[$node] + 1))
        started[$node]=$(date +%s)
      fi
      pending=1
    done
    [ -z "$pending" ] && return 0
    sleep 1
  done
}

# stop_guests: asks each agent to end (stage2 then powers off), kills what is still running after 30 s.
stop_guests() {
  local node
  for node in "${!QPID[@]}"; do
    [ -d "$RUN/$node" ] && touch "$RUN/$node/poweroff"
  done
  for _ in $(seq 1 60); do
    local alive=
    for node in "${!QPID[@]}"; do guest_gone "$node" || alive=1; done
    [ -z "$alive" ] && break
    sleep 0.5
  done
  for node in "${!QPID[@]}"; do
    guest_gone "$node" || { say "node $node did not power off: killing qemu"; kill "${QPID[$node]}" 2>/dev/null; }
    wait "${QPID[$node]}" 2>/dev/null || true
  done
  QPID=()
}
