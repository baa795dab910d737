#!/usr/bin/env bash
# Starts a private containerd (CRI + NRI) for Rail's CRI rig, imports the rig's images and installs
# one CNI conflist. Nothing outside $RAIL_RIG_RUN is touched except what CNI plugins do.
#
#   RAIL_RIG_RUN        run directory (default /tmp/rail-cri)
#   RAIL_RIG_CONFLIST   the conflist to install (required; @RUN@ inside it is replaced)
#   RAIL_RIG_CNI_DIRS   extra CNI plugin directories, colon-separated (e.g. the repo's bin/ for rail)
# Prints CONTAINER_RUNTIME_ENDPOINT and the crictl config to use.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
RUN=$RIG_RUN
: "${RAIL_RIG_CONFLIST:?set RAIL_RIG_CONFLIST to the conflist file to install}"
for f in "$RIG_BIN/containerd" "$RIG_BIN/runc" "$RIG_BIN/crictl" "$RIG_LOCAL/images/pause.tar"; do
  [ -e "$f" ] || { echo "missing $f: run $HERE/setup.sh first" >&2; exit 1; }
done
if [ -f "$RUN/containerd.pid" ] && kill -0 "$(cat "$RUN/containerd.pid")" 2>/dev/null; then
  echo "containerd already running in $RUN (pid $(cat "$RUN/containerd.pid"))" >&2; exit 1
fi

dirs="\"$RIG_CNIBIN\""
IFS=: read -ra extra <<<"${RAIL_RIG_CNI_DIRS:-}"
for d in "${extra[@]}"; do [ -n "$d" ] && dirs="$dirs, \"$d\""; done
mkdir -p "$RUN"/{root,state,tmp,opt,conf.d,cni/net.d,nri/plugins,nri/conf.d,logs}
sed -e "s#@RUN@#$RUN#g" -e "s#@BIN@#$RIG_BIN#g" -e "s#@CNI_BIN_DIRS@#$dirs#g" \
    -e "s#@PAUSE_IMAGE@#$RIG_PAUSE_IMAGE#g" "$HERE/containerd.toml.in" > "$RUN/config.toml"
rm -f "$RUN"/cni/net.d/*
sed -e "s#@RUN@#$RUN#g" "$RAIL_RIG_CONFLIST" > "$RUN/cni/net.d/$(basename "$RAIL_RIG_CONFLIST")"
cat > "$RUN/crictl.yaml" <<EOT
runtime-endpoint: unix://$RUN/containerd.sock
image-endpoint: unix://$RUN/containerd.sock
timeout: 60
EOT

t0=$(date +%s%N)
# containerd finds containerd-shim-runc-v2 through PATH.
PATH=$RIG_BIN:$PATH nohup "$RIG_BIN/containerd" --config "$RUN/config.toml" >>"$RUN/containerd.log" 2>&1 &
echo $! > "$RUN/containerd.pid"
for _ in $(seq 1 150); do
  "$RIG_BIN/ctr" --address "$RUN/containerd.sock" version >/dev/null 2>&1 && break
  kill -0 "$(cat "$RUN/containerd.pid")" 2>/dev/null || { echo "containerd died:" >&2; tail -30 "$RUN/containerd.log" >&2; exit 1; }
  sleep 0.2
done
"$RIG_BIN/ctr" --address "$RUN/containerd.sock" version >/dev/null
for img in pause busybox; do
  "$RIG_BIN/ctr" --address "$RUN/containerd.sock" -n k8s.io images import --platform linux/amd64 \
    "$RIG_LOCAL/images/$img.tar" >/dev/null
done
echo "containerd up in $(( ($(date +%s%N) - t0) / 1000000 )) ms (pid $(cat "$RUN/containerd.pid"))"
echo "export CONTAINER_RUNTIME_ENDPOINT=unix://$RUN/containerd.sock   # or crictl --config $RUN/crictl.yaml"
