# Sourced by run.sh: host packages, the guest kernel (cached under $KDIR) and the initramfs.
# Expects HERE, KDIR, VM_KERNEL_* and the say/fail helpers of run.sh.

# Debian packages on the host: qemu, a static busybox for the initramfs, kmod's depmod, cpio, zstd
# (the kernel image is zstd-compressed), and the RDMA user space the guest borrows from the host
# (rdma tool, libibverbs with the rxe provider, ibv_rc_pingpong, rping).
VM_PACKAGES="qemu-system-x86 busybox-static kmod cpio zstd iproute2 ibverbs-utils ibverbs-providers rdmacm-utils"

packages_missing() {
  local cmd
  for cmd in qemu-system-x86_64 depmod modprobe cpio zstd rdma ibv_rc_pingpong rping; do
    command -v "$cmd" >/dev/null || return 0
  done
  dpkg-query -W -f='${Status}' busybox-static 2>/dev/null | grep -q 'install ok installed' || return 0
  compgen -G '/usr/lib/*/libibverbs/librxe-rdmav*.so' >/dev/null || return 0
  return 1
}

ensure_packages() {
  packages_missing || return 0
  say "installing $VM_PACKAGES"
  local log=/tmp/rail-vm-apt.log
  export DEBIAN_FRONTEND=noninteractive
  # shellcheck disable=SC2086
  if ! apt-get install -y -q -o DPkg::Lock::Timeout=600 --no-install-recommends $VM_PACKAGES >"$log" 2>&1; then
    apt-get update -q -o DPkg::Lock::Timeout=600 >>"$log" 2>&1 || true
    # shellcheck disable=SC2086
    apt-get install -y -q -o DPkg::Lock::Timeout=600 --no-install-recommends $VM_PACKAGES >>"$log" 2>&1 ||
      { tail -20 "$log" >&2; fail "apt-get install failed (log: $log)"; }
  fi
}

# host_debian_mirror and extract_vmlinux (debian.sh, shared with integration/sriov)
# shellcheck source=debian.sh
. "$HERE/debian.sh"

# debian_mirror prints the Debian archive the host's apt uses, or deb.debian.org.
debian_mirror() { host_debian_mirror "${RAIL_VM_MIRROR:-}"; }

# ensure_kernel fills $KDIR once: the kernel's modules (depmod'ed, lib/modules/<abi>), vmlinuz, and
# vmlinux (the uncompressed ELF, which QEMU boots directly through PVH: no firmware real-mode set-up,
# no in-guest decompression, several seconds less per boot under TCG).
ensure_kernel() {
  [ -e "$KDIR/.complete" ] && return 0
  local tmp=$KDIR.partial apt
  rm -rf "$tmp"
  apt=$tmp/apt
  mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/parts" "$tmp/debs" "$tmp/root"
  echo "deb $(debian_mirror) $VM_KERNEL_SUITE main" >"$apt/sources.list"
  # A private apt configuration: the host's sources, lists and package state are not touched.
  local opts=(-q -o Dir::Etc::SourceList="$apt/sources.list" -o Dir::Etc::SourceParts="$apt/parts"
    -o Dir::State::Lists="$apt/lists" -o Dir::Cache="$apt/cache" -o Dir::State::Status=/dev/null
    -o APT::Sandbox::User=root)
  apt-get "${opts[@]}" update >"$tmp/apt.log" 2>&1 ||
    { cat "$tmp/apt.log" >&2; fail "apt-get update of $VM_KERNEL_SUITE failed"; }
  local pkgs=() p
  for p in binary modules base; do pkgs+=("linux-$p-$VM_KERNEL_ABI=$VM_KERNEL_VERSION"); done
  if ! (cd "$tmp/debs" && apt-get "${opts[@]}" download "${pkgs[@]}" >>"$tmp/apt.log" 2>&1); then
    tail -5 "$tmp/apt.log" >&2
    say "$VM_KERNEL_SUITE offers: $(apt-cache "${opts[@]}" policy linux-image-amd64 2>/dev/null | awk '/Candidate/{print $2}')"
    fail "cannot download kernel $VM_KERNEL_ABI $VM_KERNEL_VERSION: pin the offered version in $HERE/versions.env"
  fi
  for p in "$tmp"/debs/*.deb; do dpkg-deb -x "$p" "$tmp/root"; done
  local mods=$tmp/root/usr/lib/modules/$VM_KERNEL_ABI
  [ -f "$mods/vmlinuz" ] && [ -f "$mods/modules.builtin" ] || fail "kernel packages lack vmlinuz or modules.builtin"
  ln -s usr/lib "$tmp/root/lib" # depmod -b looks for <base>/lib/modules
  depmod -b "$tmp/root" "$VM_KERNEL_ABI" || fail "depmod failed"
  extract_vmlinux "$mods/vmlinuz" "$tmp/vmlinux" || say "no PVH image (booting the compressed kernel): $?"
  rm -rf "$tmp/debs" "$apt"
  rm -rf "$KDIR"
  mv "$tmp" "$KDIR"
  touch "$KDIR/.complete"
}


# ensure_initramfs prints the initramfs for guest/init, building it when missing: busybox, /init,
# and the modules init needs before the host's root is reachable (9p over virtio, overlayfs),
# decompressed for busybox insmod, in dependency order.
ensure_initramfs() {
  local sum img
  sum=$(cat "$HERE/guest/init" /bin/busybox | sha256sum | cut -c1-12)
  img=$KDIR/initramfs-$sum.cpio.gz
  if [ ! -s "$img" ]; then
    local tmp
    tmp=$(mktemp -d "$KDIR/.initramfs.XXXXXX")
    mkdir -p "$tmp/bin" "$tmp/modules"
    cp /bin/busybox "$tmp/bin/busybox"
    cp "$HERE/guest/init" "$tmp/init"
    chmod 0755 "$tmp/init"
    initramfs_modules "$tmp" "" modprobe -d "$KDIR/root"
    (cd "$tmp" && find . | cpio -o -H newc --quiet | gzip -1) >"$img.tmp"
    mv "$img.tmp" "$img"
    rm -rf "$tmp"
  fi
  echo "$img"
}
