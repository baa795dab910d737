#!/usr/bin/env bash
# Stops the rig's containerd: removes every pod first (so CNI DEL runs), then the daemon and any
# shim of this daemon, then unmounts what is left under the run directory. --purge also deletes it.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
RUN=$RIG_RUN
SOCK=$RUN/containerd.sock
alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }
if alive "$RUN/containerd.pid"; then
  timeout 120 "$RIG_BIN/crictl" --config "$RUN/crictl.yaml" rmp -fa >/dev/null 2>&1 || true
  pid=$(cat "$RUN/containerd.pid")
  kill -TERM "$pid"
  for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$pid" 2>/dev/null && kill -KILL "$pid"
fi
rm -f "$RUN/containerd.pid"
# Shims outlive containerd; only those started for this daemon's socket are ours.
for proc in /proc/[0-9]*; do
  cmd=$(tr '\0' ' ' <"$proc/cmdline" 2>/dev/null) || continue
  case "$cmd" in *containerd-shim-runc-v2*"-address $SOCK "*) kill -KILL "${proc#/proc/}" 2>/dev/null;; esac
done
# Deepest mounts first: rootfs overlays, shm, netns bind mounts.
awk -v r="$RUN/" 'index($2, r) == 1 {print $2}' /proc/mounts | sort -r | while read -r m; do umount -l "$m"; done
if [ "${1:-}" = --purge ]; then rm -rf "$RUN"; fi
exit 0
