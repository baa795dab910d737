#!/bin/bash
# node.sh start | stop | raild-start | raild-stop SIGNAL : the node's services in a fabric guest, as
# the SR-IOV and VM rigs run them: the CRI rig's containerd (NRI on) with runc, and raild (--root /,
# the guest's real sysfs) as its NRI plugin. The tests write the conflist and raild's configuration
# into the job share (/run/rail-vm/node/) and node.env (BIN: raild and rail; CRI: integration/cri;
# RAIL_RIG_CACHE: the CRI rig's cache; IMAGE: the pods' image archive). State lives on the guest's
# /run (a tmpfs: containerd's overlay snapshots cannot sit on the overlay root); raild's and
# containerd's logs go to the job share, where the tests read them.
set -euo pipefail
share=/run/rail-vm
W=/run/fabric-node
# shellcheck disable=SC1091
. "$share/node.env"
export RAIL_RIG_CACHE RAIL_RIG_RUN=$W/cri
raild_pid() { cat "$W/raild.pid" 2>/dev/null; }
raild_alive() { local p; p=$(raild_pid) && kill -0 "$p" 2>/dev/null; }

raild_start() {
  local from
  from=$(stat -c %s "$share/raild.log" 2>/dev/null || echo 0)
  setsid "$BIN/raild" serve --config "$share/node/raild.yaml" --root / --socket "$W/raild.sock" \
    --state-dir "$W/state" --node-name "$(hostname)" >>"$share/raild.log" 2>&1 </dev/null &
  echo $! >"$W/raild.pid"
  for _ in $(seq 1 600); do
    tail -c +"$((from + 1))" "$share/raild.log" | grep -q 'synchronized with the runtime' && return 0
    raild_alive || { echo "raild exited at start:"; tail -c +"$((from + 1))" "$share/raild.log"; return 1; }
    sleep 0.2
  done
  echo "raild did not register with containerd's NRI in 120 s"
  return 1
}

raild_stop() {
  local p sig=${1:-TERM}
  p=$(raild_pid) || return 0
  kill -"$sig" "$p" 2>/dev/null || true
  for _ in $(seq 1 150); do kill -0 "$p" 2>/dev/null || break; sleep 0.2; done
  if kill -0 "$p" 2>/dev/null; then echo "raild (pid $p) still runs 30 s after SIG$sig"; return 1; fi
  rm -f "$W/raild.pid"
}

case $1 in
start)
  mkdir -p "$W"
  RAIL_RIG_CONFLIST=$share/node/10-rail.conflist RAIL_RIG_CNI_DIRS=$BIN "$CRI/start-containerd.sh"
  raild_start
  # shellcheck disable=SC1091
  . "$CRI/lib.sh"
  "$RIG_BIN/ctr" --address "$W/cri/containerd.sock" -n k8s.io images import --platform linux/amd64 "$IMAGE" >/dev/null
  ;;
stop)
  "$CRI/stop-containerd.sh"
  raild_stop TERM
  cp "$W/cri/containerd.log" "$share/containerd.log" 2>/dev/null || true
  ;;
raild-start) raild_start ;;
raild-stop) raild_stop "${2:-TERM}" ;;
*) echo "usage: $0 start | stop | raild-start | raild-stop SIGNAL" >&2; exit 2 ;;
esac
