# Shared by the rig's scripts (sourced, not run): where the cache and the run directory live.
# RIG_DIR      cache for upstream binaries, keyed on versions.env
# RIG_LOCAL    cache for the rig's own helpers and images, keyed on tools/
# RIG_RUN      one running containerd (state, sockets, logs); default /tmp/rail-cri
HERE_LIB=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=versions.env
. "$HERE_LIB/versions.env"
rig_hash() { sha256sum | cut -c1-12; }
RIG_CACHE=${RAIL_RIG_CACHE:-/var/cache/rail-rig}
RIG_DIR=$RIG_CACHE/cri-$(rig_hash < "$HERE_LIB/versions.env")
RIG_TOOLS_HASH=$( (cd "$HERE_LIB/tools" && find . -type f \( -name '*.go' -o -name go.mod -o -name go.sum \) \
  -print0 | LC_ALL=C sort -z | xargs -0 sha256sum) | rig_hash)
RIG_LOCAL=$RIG_DIR/local-$RIG_TOOLS_HASH
RIG_BIN=$RIG_DIR/bin
RIG_CNIBIN=$RIG_DIR/cni/bin
RIG_LOG=$RIG_DIR/log
RIG_RUN=${RAIL_RIG_RUN:-/tmp/rail-cri}
RIG_PAUSE_IMAGE=localhost/rail-rig/pause:1
RIG_BUSYBOX_IMAGE=localhost/rail-rig/busybox:1
