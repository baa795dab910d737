#!/usr/bin/env bash
# Builds upstream sriov-cni (the pinned tag of sriov-cni.env) once and prints the binary's path:
#
#   ./sriov-cni.sh                       -> /var/cache/rail-rig/sriov-cni-v2.10.0/sriov
#
# sriov-cni's module is not served by the Go module proxy, so its source comes from git:
#   SRIOV_CNI_SRC   a git directory (a clone or a bare mirror) holding the pinned tag, or a URL to
#                   clone it from (default: the upstream URL of sriov-cni.env)
# The tag must resolve to the pinned commit (a moved tag is refused). Its dependencies come from the
# Go module proxy. Nothing is written to the repository: the source is unpacked into a temp dir and the
# binary cached under $RAIL_RIG_CACHE/sriov-cni-<tag>/ (default /var/cache/rail-rig).
#
# Exit code: 0 the binary's path printed; 3 no source (offline, GitHub unreachable as on CI): the
# caller compares with host-device + static instead and says so; 1 the build failed.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=sriov-cni.env
. "$HERE/sriov-cni.env"
say() { echo "sriov-cni: $*" >&2; }
CACHE=${RAIL_RIG_CACHE:-/var/cache/rail-rig}/sriov-cni-$SRIOV_CNI_TAG
if [ -x "$CACHE/sriov" ]; then
  echo "$CACHE/sriov"
  exit 0
fi
SRC=${SRIOV_CNI_SRC:-$SRIOV_CNI_URL}
TMP=$(mktemp -d /tmp/sriov-cni-build.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
GIT=$SRC
if [ ! -d "$SRC" ]; then
  if ! timeout 120 git clone -q --bare --depth 1 --branch "$SRIOV_CNI_TAG" "$SRC" "$TMP/git" 2>"$TMP/clone.log"; then
    say "no source: cannot clone $SRIOV_CNI_TAG from $SRC ($(tail -1 "$TMP/clone.log")); set SRIOV_CNI_SRC to a clone or mirror holding it"
    exit 3
  fi
  GIT=$TMP/git
fi
commit=$(git -C "$GIT" rev-parse -q --verify "$SRIOV_CNI_TAG^{commit}" 2>/dev/null) || {
  say "no source: $GIT has no tag $SRIOV_CNI_TAG"
  exit 3
}
if [ "$commit" != "$SRIOV_CNI_COMMIT" ]; then
  say "tag $SRIOV_CNI_TAG in $GIT is commit $commit, pinned $SRIOV_CNI_COMMIT: refusing a moved tag (update sriov-cni.env deliberately)"
  exit 1
fi
mkdir -p "$TMP/src"
git -C "$GIT" archive "$commit" | tar -x -C "$TMP/src"
say "building $SRIOV_CNI_TAG ($commit) from $SRC..."
(cd "$TMP/src" && CGO_ENABLED=0 GOFLAGS=-mod=mod GOTOOLCHAIN=local go build -trimpath -o "$TMP/sriov" ./cmd/sriov) || {
  say "build failed"
  exit 1
}
mkdir -p "$CACHE"
mv "$TMP/sriov" "$CACHE/sriov.tmp"
mv "$CACHE/sriov.tmp" "$CACHE/sriov"
echo "$CACHE/sriov"
