#!/usr/bin/env bash
# Builds Rail's Kubernetes rig: etcd, kube-apiserver, kube-scheduler, kube-controller-manager, kubelet,
# kubectl and helm at the versions pinned in versions.env, plus (through ../cri/setup.sh) containerd with
# NRI, runc, crictl, the CNI plugins and the pause/busybox images of the CRI rig.
#
# Outputs land outside the repository in $RAIL_RIG_CACHE/k8s-<sha256(versions.env)>/bin (default cache
# /var/cache/rail-rig), so a machine pays the cold build (~10 min on 2 cores) once; a filled cache costs
# about a second. Builds take /var/lock/rail-rig-build.lock, shared with the other rigs of this machine.
# The last two lines printed are the CRI rig's directory and this rig's directory.
#
#   RAIL_RIG_APT=0   skip apt (packages already present)     RAIL_RIG_NICE   nice level of the builds (10)
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
GO=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
export GOTOOLCHAIN=${GOTOOLCHAIN:-local}
NICE="nice -n ${RAIL_RIG_NICE:-10}"
KUBE_BINS="kubelet kube-apiserver kube-scheduler kube-controller-manager kubectl"
mkdir -p "$K8S_BIN" "$K8S_LOG"
cd "$K8S_DIR"   # `go mod download` outside any module
TIMES=$K8S_LOG/setup-times.txt

# shellcheck source=../cri/lib.sh
. "$HERE/../cri/lib.sh"
cached() {
  local b
  for b in $KUBE_BINS etcd helm; do [ -x "$K8S_BIN/$b" ] || return 1; done
  for b in "$RIG_BIN/containerd" "$RIG_BIN/runc" "$RIG_BIN/crictl" "$RIG_CNIBIN/ptp" "$RIG_LOCAL/images/pause.tar"; do
    [ -e "$b" ] || return 1
  done
}

# step NAME OUTPUT -- CMD...: runs CMD unless OUTPUT exists; logs wall seconds.
step() {
  local name=$1 out=$2; shift 3
  if [ -e "$out" ]; then echo "cached: $name"; return 0; fi
  echo ">>> $name"
  local t0; t0=$(date +%s)
  "$@"
  printf '%s %-10s wall %5ds\n' "$(date -u +%FT%TZ)" "$name" "$(( $(date +%s) - t0 ))" | tee -a "$TIMES"
}

# k8s.io/kubernetes replaces its staging modules with ./staging/...; `go install …@version` refuses such
# a module, so build from a throwaway module that repeats those replaces with the published v0.X.Y.
KMOD=$K8S_DIR/build/kube
kube_module() {
  [ -f "$KMOD/go.mod" ] && return 0
  mkdir -p "$KMOD.tmp"
  printf 'module railrig/kube\n\ngo 1.26.0\n\nrequire (\n\tk8s.io/kubernetes %s\n\tgo.etcd.io/etcd/server/v3 %s\n)\n' \
    "$K8S_VERSION" "$ETCD_VERSION" > "$KMOD.tmp/go.mod"
  local staging="v0.${K8S_VERSION#v1.}" gomod
  gomod=$("$GO" mod download -json "k8s.io/kubernetes@$K8S_VERSION" | jq -r .GoMod)
  { echo; echo "replace ("
    sed -n '/^replace (/,/^)/p' "$gomod" | awk '/=> \.\/staging/ {print $1}' | grep -vx 'k8s.io/sample-cli-plugin' |
      while read -r m; do printf '\t%s => %s %s\n' "$m" "$m" "$staging"; done
    echo ")"; } >> "$KMOD.tmp/go.mod"
  rm -rf "$KMOD"; mv "$KMOD.tmp" "$KMOD"
}
kube_ldflags() {
  local minor=${K8S_VERSION#v1.} p out="-s -w"
  minor=${minor%%.*}
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    out="$out -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean"
    out="$out -X $p.buildDate=1970-01-01T00:00:00Z"
  done
  echo "$out"
}
build_kube() { # one `go build` for all five: shared packages compile once, in parallel
  kube_module
  local tmp pkgs="" b; tmp=$(mktemp -d "$K8S_DIR/.build.XXXXXX")
  for b in $KUBE_BINS; do pkgs="$pkgs k8s.io/kubernetes/cmd/$b"; done
  # shellcheck disable=SC2086
  (cd "$KMOD" && CGO_ENABLED=0 GOFLAGS=-mod=mod $NICE "$GO" build -trimpath -ldflags "$(kube_ldflags)" -o "$tmp/" $pkgs)
  for b in $KUBE_BINS; do mv "$tmp/$b" "$K8S_BIN/$b"; done
  rmdir "$tmp"
}
build_etcd() {
  kube_module
  (cd "$KMOD" && CGO_ENABLED=0 GOFLAGS=-mod=mod $NICE "$GO" build -trimpath -ldflags "-s -w" -o "$K8S_BIN/etcd.tmp" go.etcd.io/etcd/server/v3)
  mv "$K8S_BIN/etcd.tmp" "$K8S_BIN/etcd"
}
build_helm() { # inside the downloaded module: `go install` would ask the proxy for a version list
  local dir; dir=$("$GO" mod download -json "helm.sh/helm/v3@$HELM_VERSION" | jq -r .Dir)
  (cd "$dir" && CGO_ENABLED=0 GOFLAGS=-mod=readonly $NICE "$GO" build -trimpath -o "$K8S_BIN/helm.tmp" \
    -ldflags "-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION" ./cmd/helm)
  mv "$K8S_BIN/helm.tmp" "$K8S_BIN/helm"
}

apt_deps() { # openssl: the node's PKI; curl: health checks; jq: module metadata
  command -v openssl >/dev/null && command -v curl >/dev/null && command -v jq >/dev/null && return 0
  [ "${RAIL_RIG_APT:-1}" = 1 ] || { echo "openssl, curl and jq are needed" >&2; return 1; }
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 update -qq
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends openssl curl jq >/dev/null
}

T0=$(date +%s)
apt_deps
if ! cached; then
  exec 9>/var/lock/rail-rig-build.lock
  echo "waiting for /var/lock/rail-rig-build.lock (another rig build may hold it)"
  flock 9
fi
CRI_DIR=$("$HERE/../cri/setup.sh" | tail -1)
step kube "$K8S_BIN/kubectl" -- build_kube
step etcd "$K8S_BIN/etcd" -- build_etcd
step helm "$K8S_BIN/helm" -- build_helm
echo "setup done in $(( $(date +%s) - T0 ))s"
echo "$CRI_DIR"
echo "$K8S_DIR"
