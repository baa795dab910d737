#!/usr/bin/env bash
# Runs in the SR-IOV rig's guest (bench.sh): readies pf0 (igb, 7 VFs, the most igb has, each a netdev
# under igbvf; an rxe on pf0's netdev is the RDMA device rail's netconf selects the PF by), then runs
# rail-bench's VF scenario on them with the binaries in BIN and the upstream plugins in PLUGINS.
#
#   bench-guest.sh BIN PLUGINS [rail-bench flags...]
set -euo pipefail
BIN=$1
PLUGINS=$2
shift 2
PF_PCI=0000:01:00.0 # pf0 in run.sh's topology (a root port)
VFS=7
modprobe -a igb igbvf rdma_rxe
dev=/sys/bus/pci/devices/$PF_PCI
for _ in $(seq 100); do
  netdev=$(ls "$dev/net" 2>/dev/null | head -1)
  [ -n "$netdev" ] && break
  sleep 0.1
done
[ -n "$netdev" ] || { echo "bench-guest: PF $PF_PCI has no netdev" >&2; exit 125; }
[ "$netdev" = pf0 ] || ip link set "$netdev" name pf0
# up before the VFs exist: igbvf takes random MACs from a PF still in reset
ip link set pf0 up
echo "$VFS" >"$dev/sriov_numvfs"
for vf in $(seq 0 $((VFS - 1))); do
  for _ in $(seq 200); do
    [ -n "$(ls "$dev/virtfn$vf/net" 2>/dev/null)" ] && break
    sleep 0.1
  done
  [ -n "$(ls "$dev/virtfn$vf/net" 2>/dev/null)" ] || { echo "bench-guest: VF $vf of pf0 has no netdev" >&2; exit 125; }
done
rdma link add rxe0 type rxe netdev pf0
exec "$BIN/rail-bench" --bin "$BIN" --plugins "$PLUGINS" --vf pf0 --vf-rdma rxe0 "$@"
