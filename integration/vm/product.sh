# Sourced by run.sh: what the guest needs to run the product as a node does. raild and rail are
# built from this checkout into the run directory; containerd, runc, crictl, the upstream CNI
# plugins and the image tool come from the CRI rig (integration/cri/setup.sh, cached under
# /var/cache/rail-rig and built once per machine; another engineer's build of it is waited for).
# The guest reads all of them at their host paths through its read-only 9p root.
# Expects REPO, RUN, GO and the say/fail helpers of run.sh; sets RAIL_VM_RAIL_BIN,
# RAIL_VM_CRI_RIG and RAIL_VM_CRI_TOOLS, which boot.sh hands to the guest's job.

ensure_product() {
  RAIL_VM_RAIL_BIN=$RUN/bin
  mkdir -p "$RAIL_VM_RAIL_BIN"
  (cd "$REPO" && CGO_ENABLED=0 "$GO" build -trimpath -o "$RAIL_VM_RAIL_BIN/raild" ./daemon &&
    CGO_ENABLED=0 "$GO" build -trimpath -o "$RAIL_VM_RAIL_BIN/rail" ./plugins/rail) ||
    fail "building raild and rail failed"
  local cri=$REPO/integration/cri log=$RUN/cri-setup.log lock=()
  # A cold build takes minutes and is serialized with the other rigs' builds (the k8s rig's holds
  # the lock far longer); a built rig only needs setup.sh's own check, under its own lock.
  rig_built "$cri" || lock=(flock /var/lock/rail-rig-build.lock)
  if ! "${lock[@]}" bash "$cri/setup.sh" >"$log" 2>&1; then
    tail -20 "$log" >&2
    fail "the CRI rig (integration/cri/setup.sh) could not be built; log above"
  fi
  # lib.sh names the rig's directories (keyed on its pinned versions and its tools' sources).
  RAIL_VM_CRI_RIG=$(bash -c '. "$1/lib.sh" && echo "$RIG_DIR"' _ "$cri")
  RAIL_VM_CRI_TOOLS=$(bash -c '. "$1/lib.sh" && echo "$RIG_LOCAL"' _ "$cri")
  [ -x "$RAIL_VM_CRI_RIG/bin/containerd" ] && [ -x "$RAIL_VM_CRI_TOOLS/bin/ociimage" ] ||
    fail "setup.sh finished but $RAIL_VM_CRI_RIG lacks containerd or ociimage"
  export RAIL_VM_RAIL_BIN RAIL_VM_CRI_RIG RAIL_VM_CRI_TOOLS
}

# rig_built CRI_DIR: every output setup.sh makes is there.
rig_built() {
  bash -c '. "$1/lib.sh" && for f in "$RIG_BIN"/{containerd,containerd-shim-runc-v2,ctr,runc,crictl} \
    "$RIG_CNIBIN"/{ptp,host-local,loopback} "$RIG_LOCAL"/bin/{ociimage,pause} "$RIG_LOCAL"/images/{pause,busybox}.tar; do
    [ -e "$f" ] || exit 1; done' _ "$1"
}
