#!/usr/bin/env bash
# Stops what start-node.sh started (recorded PIDs only) and undoes its host changes: pods (CNI DEL),
# this containerd's shims, mounts under $RUN, the kubepods cgroups, the rknode0 veth, the sysctls the
# kubelet rewrote, and the host dirs the kubelet created. --purge also deletes $RUN.
#   stop-node.sh CRI_RIG_DIR [--purge]
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
CRI=${1:?usage: stop-node.sh CRI_RIG_DIR [--purge]}
RUN=$K8S_RUN; CRUN=$RUN/containerd; SOCK=$CRUN/containerd.sock
running() { kill -0 "$1" 2>/dev/null && ! grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null; }  # a zombie is gone
alive() { [ -f "$RUN/$1.pid" ] && running "$(cat "$RUN/$1.pid")"; }
stop() { # stop NAME: TERM, up to 20 s, then KILL
  alive "$1" || { rm -f "$RUN/$1.pid"; return 0; }
  local pid; pid=$(cat "$RUN/$1.pid"); kill -TERM "$pid"
  for _ in $(seq 1 200); do running "$pid" || break; sleep 0.1; done
  running "$pid" && { echo "SIGKILL $1 ($pid)"; kill -KILL "$pid"; }
  rm -f "$RUN/$1.pid"
}
stop fake-gpu-plugin; stop kube-controller-manager; stop kube-scheduler; stop kubelet
ids=""
if alive containerd; then  # every pod: stop (CNI DEL) and remove; no kubelet recreates them now
  ids=$("$CRI/bin/crictl" --config "$RUN/crictl.yaml" pods -q 2>/dev/null; "$CRI/bin/crictl" --config "$RUN/crictl.yaml" ps -aq 2>/dev/null)
  timeout 120 "$CRI/bin/crictl" --config "$RUN/crictl.yaml" rmp -fa >/dev/null 2>&1 || true
fi
stop containerd
for p in /proc/[0-9]*; do  # shims of this containerd only (matched by its socket)
  { tr '\0' ' ' < "$p/cmdline"; } 2>/dev/null | grep -q -- "containerd-shim-runc-v2 .*-address $SOCK " || continue
  kill -KILL "${p#/proc/}" 2>/dev/null
done
# processes of our pods and containers that outlived their shim (their cgroup names carry our IDs)
for id in $ids; do
  for p in $(grep -l -- "$id" /proc/[0-9]*/cgroup 2>/dev/null); do
    p=${p#/proc/}; p=${p%/cgroup}; echo "killing leftover $p of $id"; kill -KILL "$p" 2>/dev/null
  done
done
[ -n "$ids" ] && sleep 0.5   # let the kernel reap them before the cgroups go
awk -v r="$RUN/" 'index($2, r) == 1 {print $2}' /proc/mounts | sort -r | while read -r m; do umount -l "$m"; done
stop kube-apiserver; stop etcd
for h in /sys/fs/cgroup/*/kubepods /sys/fs/cgroup/unified/kubepods; do
  [ -d "$h" ] && find "$h" -depth -type d -exec rmdir {} \; 2>/dev/null
  [ -d "$h" ] && echo "WARN: $h still present"
done
ip link show rknode0 >/dev/null 2>&1 && ip link del rknode0
if [ -f "$RUN/host-state.env" ]; then
  while read -r kind path val; do
    case $kind in
      sysctl) [ "$(cat "$path")" = "$val" ] || { echo "$val" > "$path" && echo "restored $path=$val"; } ;;
      existed) [ "$path" = /var/lib/cni/results ] && rm -f /var/lib/cni/results/rail-k8s-* ;;
      created)
        case $path in
          /var/lib/kubelet) rm -f /var/lib/kubelet/device-plugins/kubelet.sock /var/lib/kubelet/device-plugins/kubelet_internal_checkpoint \
                                  /var/lib/kubelet/device-plugins/fake-nvidia-com-gpu.sock
                            rmdir /var/lib/kubelet/device-plugins /var/lib/kubelet 2>/dev/null ;;
          /var/log/containers) find /var/log/containers -maxdepth 1 -type l -lname "$RUN/*" -delete 2>/dev/null
                            rmdir /var/log/containers 2>/dev/null ;;
          /var/lib/cni/results) rm -f /var/lib/cni/results/rail-k8s-*; rmdir /var/lib/cni/results /var/lib/cni 2>/dev/null ;;
          /run/rail) rm -f /run/rail/raild.sock; rmdir /run/rail 2>/dev/null ;;
        esac
        [ -e "$path" ] && echo "WARN: $path not removed (not empty?)" ;;
    esac
  done < "$RUN/host-state.env"
  rm -f "$RUN/host-state.env"
fi
[ "${2:-}" = --purge ] && rm -rf "$RUN"
echo "node stopped"
exit 0
