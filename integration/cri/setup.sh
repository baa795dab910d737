#!/usr/bin/env bash
# Builds Rail's CRI test rig: containerd (CRI + NRI) with ctr and the runc shim, runc (+seccomp), crictl,
# the CNI plugins ptp/host-local/loopback, the rig's own helpers (image builder, static pause) and two
# local OCI images (pause, busybox).
#
# Everything lands in a cache directory outside the repository, keyed on the pinned versions
# (versions.env) for the upstream binaries and on the helper sources (tools/) for the helpers and images,
# so a machine pays for the cold build once. Re-running with a filled cache costs about a second.
#
#   sudo integration/cri/setup.sh          # prints the cache dir on its last line
#   RAIL_RIG_CACHE=/some/dir ...           # cache root (default /var/cache/rail-rig)
#   RAIL_RIG_STEPS="containerd runc" ...   # run a subset of the steps
#   RAIL_RIG_APT=0 ...                     # skip apt (packages already present)
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=versions.env
. "$HERE/lib.sh"

GO=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
export GOTOOLCHAIN=${GOTOOLCHAIN:-local} GOFLAGS=${GOFLAGS:-}
mkdir -p "$RIG_BIN" "$RIG_CNIBIN" "$RIG_LOG" "$RIG_LOCAL/bin" "$RIG_LOCAL/images"
TIMES=$RIG_LOG/setup-times.txt

# Only one setup at a time per cache directory.
exec 9>"$RIG_DIR/.lock"
flock 9

# step NAME OUTPUT... -- CMD...: runs CMD unless every OUTPUT already exists; logs wall and CPU seconds.
step() {
  local name=$1; shift
  local outs=() missing=0
  while [ "$1" != -- ]; do outs+=("$1"); shift; done; shift
  for o in "${outs[@]}"; do [ -e "$o" ] || missing=1; done
  if [ "$missing" = 0 ]; then echo "cached: $name"; return 0; fi
  case " ${RAIL_RIG_STEPS:-all} " in *" all "*|*" $name "*) ;; *) echo "skipped: $name"; return 0;; esac
  echo ">>> $name"
  local t0 c0 c1
  t0=$(date +%s%N); cpu_snapshot; c0=$(cpu_seconds)
  "$@"
  cpu_snapshot; c1=$(cpu_seconds)
  printf '%s %-12s wall %7.1fs  cpu %7.1fs\n' "$(date -u +%FT%TZ)" "$name" \
    "$(awk -v a="$t0" -v b="$(date +%s%N)" 'BEGIN{print (b-a)/1e9}')" \
    "$(awk -v a="$c0" -v b="$c1" 'BEGIN{print b-a}')" | tee -a "$TIMES"
}
# CPU seconds (user+sys) used so far by this shell's finished children. `times` must run in this shell
# (a $(...) subshell has no children of its own), hence the file.
cpu_snapshot() { times > "$RIG_LOG/.times"; }
cpu_seconds() { awk 'NR==2{gsub(/[ms]/," "); print $1*60+$2+$3*60+$4}' "$RIG_LOG/.times"; }

apt_deps() {
  [ "${RAIL_RIG_APT:-1}" = 1 ] || return 0
  export DEBIAN_FRONTEND=noninteractive
  apt-get -o DPkg::Lock::Timeout=600 update -qq
  # gcc + libseccomp-dev: runc's cgo nsenter and seccomp; busybox-static: test image; jq: e2e checks.
  apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends \
    gcc libc6-dev pkg-config libseccomp-dev busybox-static jq iproute2 >/dev/null
}
build_containerd() {
  local tmp; tmp=$(mktemp -d "$RIG_DIR/.build.XXXXXX")
  CGO_ENABLED=0 GOBIN=$tmp "$GO" install -trimpath \
    -ldflags "-s -w -X github.com/containerd/containerd/v2/version.Version=$CONTAINERD_VERSION" \
    "github.com/containerd/containerd/v2/cmd/containerd@$CONTAINERD_VERSION" \
    "github.com/containerd/containerd/v2/cmd/ctr@$CONTAINERD_VERSION" \
    "github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2@$CONTAINERD_VERSION"
  mv "$tmp"/* "$RIG_BIN"/ && rmdir "$tmp"
}
build_runc() {
  local tmp; tmp=$(mktemp -d "$RIG_DIR/.build.XXXXXX")
  CGO_ENABLED=1 GOBIN=$tmp "$GO" install -trimpath -tags seccomp \
    -ldflags "-s -w -X main.version=${RUNC_VERSION#v}" "github.com/opencontainers/runc@$RUNC_VERSION"
  mv "$tmp/runc" "$RIG_BIN/runc" && rmdir "$tmp"
}
build_crictl() {
  # "go install crictl@version" asks the proxy for the module's version list (deprecation check), which a
  # filtering proxy may refuse; downloading the exact version and building inside it needs no list.
  local dir; dir=$("$GO" mod download -json "sigs.k8s.io/cri-tools@$CRICTL_VERSION" | jq -r .Dir)
  (cd "$dir" && CGO_ENABLED=0 "$GO" build -trimpath -mod=readonly -o "$RIG_BIN/crictl.tmp" \
    -ldflags "-s -w -X sigs.k8s.io/cri-tools/pkg/version.Version=$CRICTL_VERSION" ./cmd/crictl)
  mv "$RIG_BIN/crictl.tmp" "$RIG_BIN/crictl"
}
build_cni_plugins() {
  local p=github.com/containernetworking/plugins/plugins tmp
  tmp=$(mktemp -d "$RIG_DIR/.build.XXXXXX")
  CGO_ENABLED=0 GOBIN=$tmp "$GO" install -trimpath -ldflags "-s -w" \
    "$p/main/ptp@$CNI_PLUGINS_VERSION" "$p/ipam/host-local@$CNI_PLUGINS_VERSION" \
    "$p/main/loopback@$CNI_PLUGINS_VERSION"
  mv "$tmp"/* "$RIG_CNIBIN"/ && rmdir "$tmp"
}
build_tools() {
  (cd "$HERE/tools" && CGO_ENABLED=0 GOBIN="$RIG_LOCAL/bin" "$GO" install -trimpath -ldflags "-s -w" \
    ./cmd/ociimage ./cmd/pause)
}
build_images() {
  local bb=${BUSYBOX:-/bin/busybox}
  "$RIG_LOCAL/bin/ociimage" -name "$RIG_PAUSE_IMAGE" -o "$RIG_LOCAL/images/pause.tar.tmp" \
    -file "$RIG_LOCAL/bin/pause:/pause" -entrypoint /pause
  "$RIG_LOCAL/bin/ociimage" -name "$RIG_BUSYBOX_IMAGE" -o "$RIG_LOCAL/images/busybox.tar.tmp" \
    -file "$bb:/bin/busybox" -busybox /bin/busybox -cmd /bin/sh -require-static
  mv "$RIG_LOCAL/images/pause.tar.tmp" "$RIG_LOCAL/images/pause.tar"
  mv "$RIG_LOCAL/images/busybox.tar.tmp" "$RIG_LOCAL/images/busybox.tar"
}

T0=$(date +%s)
step apt /usr/bin/jq /usr/include/seccomp.h /bin/busybox -- apt_deps
step containerd "$RIG_BIN/containerd" "$RIG_BIN/ctr" "$RIG_BIN/containerd-shim-runc-v2" -- build_containerd
step runc "$RIG_BIN/runc" -- build_runc
step crictl "$RIG_BIN/crictl" -- build_crictl
step cni "$RIG_CNIBIN/ptp" "$RIG_CNIBIN/host-local" "$RIG_CNIBIN/loopback" -- build_cni_plugins
step tools "$RIG_LOCAL/bin/ociimage" "$RIG_LOCAL/bin/pause" -- build_tools
step images "$RIG_LOCAL/images/pause.tar" "$RIG_LOCAL/images/busybox.tar" -- build_images
echo "setup done in $(( $(date +%s) - T0 ))s"
echo "$RIG_DIR"
