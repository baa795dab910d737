#!/usr/bin/env bash
# Builds (once) the SR-IOV VM rig's cache, touching no package of the host:
#   $SRIOV_RIG_CACHE/dl/            debootstrap (apt-get download through a private apt config, unpacked)
#   $SRIOV_RIG_CACHE/<key>/root/    a Debian trixie root (debootstrap minbase) with QEMU 10 and the
#                                   guest's user space, plus the guest kernel's modules (depmod'ed);
#                                   QEMU runs chrooted here and the guest boots this tree as its /
#   $SRIOV_RIG_CACHE/<key>/boot/vmlinux   the uncompressed kernel (QEMU boots it through PVH)
#   $SRIOV_RIG_CACHE/<key>/boot/initramfs-<sum>.cpio.gz   busybox + guest/init + 9p/overlay modules
# <key> is a hash of versions.env and the package list below.
#
#   sudo ./setup.sh          build or check the cache, print the rig directory
# run.sh sources this file and calls ensure_rig.
#
# Environment: SRIOV_RIG_CACHE (default /var/cache/rail-rig/sriov), SRIOV_RIG_MIRROR (default: the host's Debian
# mirror, else http://deb.debian.org/debian).
set -euo pipefail
SETUP_HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=versions.env
. "$SETUP_HERE/versions.env"

# What the trixie root gets besides minbase: QEMU, the initramfs' busybox, kmod (depmod, modprobe),
# cpio/zstd for the initramfs and vmlinux, and the guest's tools.
RIG_PACKAGES="qemu-system-x86 busybox-static kmod cpio zstd xz-utils iproute2 ethtool pciutils procps
iputils-ping tcpdump ibverbs-utils ibverbs-providers rdmacm-utils perftest"

RIG_CACHE=${SRIOV_RIG_CACHE:-/var/cache/rail-rig/sriov}
RIG_KEY=$( (cat "$SETUP_HERE/versions.env"; echo "$RIG_PACKAGES") | sha256sum | cut -c1-10)
RIG_DIR=$RIG_CACHE/$RIG_KEY
RIG_ROOT=$RIG_DIR/root

rig_say() { echo "sriov-rig: $*" >&2; }
rig_fail() { rig_say "error: $*"; exit 125; }

# host_debian_mirror and extract_vmlinux [ZSTD...] (Rail's integration/vm/debian.sh)
# shellcheck source=../vm/debian.sh
. "$SETUP_HERE/../vm/debian.sh"

rig_mirror() { host_debian_mirror "${SRIOV_RIG_MIRROR:-}"; }

# in_root CMD...: runs CMD chrooted in the (partial) root $1 with /proc, /dev and /sys mounted, in a
# private mount namespace (the mounts vanish with it; nothing stays mounted on the host).
in_root() {
  local root=$1
  shift
  unshare -m --propagation private -- sh -c '
    r=$1; shift
    mount -t proc proc "$r/proc" && mount --rbind /dev "$r/dev" && mount -t sysfs sys "$r/sys" || exit 125
    exec chroot "$r" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
      DEBIAN_FRONTEND=noninteractive "$@"' sh "$root" "$@"
}

# ensure_debootstrap: debootstrap of $RIG_SUITE, downloaded and unpacked (never installed).
ensure_debootstrap() {
  local dl=$RIG_CACHE/dl apt=$RIG_CACHE/dl/apt
  [ -x "$dl/debootstrap/usr/sbin/debootstrap" ] && return 0
  rm -rf "$dl"
  mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/parts" "$dl/debs"
  echo "deb $(rig_mirror) $RIG_SUITE main" >"$apt/sources.list"
  local opts=(-q -o Dir::Etc::SourceList="$apt/sources.list" -o Dir::Etc::SourceParts="$apt/parts"
    -o Dir::State::Lists="$apt/lists" -o Dir::Cache="$apt/cache" -o Dir::State::Status=/dev/null
    -o APT::Sandbox::User=root -o Acquire::IndexTargets::deb::DEP-11::DefaultEnabled=false
    -o Acquire::IndexTargets::deb::DEP-11-icons::DefaultEnabled=false
    -o Acquire::IndexTargets::deb::DEP-11-icons-small::DefaultEnabled=false -o Acquire::Languages=none)
  apt-get "${opts[@]}" update >"$dl/apt.log" 2>&1 || { tail -5 "$dl/apt.log" >&2; rig_fail "apt-get update ($RIG_SUITE)"; }
  (cd "$dl/debs" && apt-get "${opts[@]}" download debootstrap >>"$dl/apt.log" 2>&1) ||
    { tail -5 "$dl/apt.log" >&2; rig_fail "apt-get download debootstrap"; }
  dpkg-deb -x "$dl"/debs/debootstrap_*.deb "$dl/debootstrap"
  rm -rf "$apt" "$dl/debs"
}

# ensure_root: the trixie root with QEMU, the guest's tools and the kernel (modules in place).
ensure_root() {
  [ -e "$RIG_ROOT/.complete" ] && return 0
  local tmp=$RIG_DIR/root.partial mirror log=$RIG_DIR/setup.log t
  mirror=$(rig_mirror)
  rm -rf "$tmp"
  mkdir -p "$RIG_DIR"
  : >"$log"
  t=$SECONDS
  DEBOOTSTRAP_DIR=$RIG_CACHE/dl/debootstrap/usr/share/debootstrap \
    "$RIG_CACHE/dl/debootstrap/usr/sbin/debootstrap" --variant=minbase \
    --keyring=/usr/share/keyrings/debian-archive-keyring.gpg "$RIG_SUITE" "$tmp" "$mirror" >>"$log" 2>&1 ||
    { tail -5 "$log" >&2; rig_fail "debootstrap $RIG_SUITE failed (log: $log)"; }
  rig_say "debootstrap $RIG_SUITE minbase: $((SECONDS - t)) s"
  # no daemon may start in the root; the kernel's suite for apt-get download
  printf '#!/bin/sh\nexit 101\n' >"$tmp/usr/sbin/policy-rc.d"
  chmod 0755 "$tmp/usr/sbin/policy-rc.d"
  echo "deb $mirror $VM_KERNEL_SUITE main" >"$tmp/etc/apt/sources.list.d/kernel-suite.list"
  local qemu=qemu-system-x86 pkgs=() p
  [ -n "$RIG_QEMU_VERSION" ] && qemu="qemu-system-x86=$RIG_QEMU_VERSION"
  t=$SECONDS
  # shellcheck disable=SC2086
  in_root "$tmp" sh -c 'apt-get -q update && apt-get install -y -q --no-install-recommends "$@"' sh \
    $qemu ${RIG_PACKAGES/qemu-system-x86/} >>"$log" 2>&1 ||
    { tail -8 "$log" >&2; rig_fail "apt-get install in the $RIG_SUITE root failed (log: $log)"; }
  rig_say "QEMU and guest packages: $((SECONDS - t)) s"
  t=$SECONDS
  for p in binary modules base; do pkgs+=("linux-$p-$VM_KERNEL_ABI=$VM_KERNEL_VERSION"); done
  mkdir -p "$tmp/var/tmp/kernel-debs"
  if ! in_root "$tmp" sh -c 'cd /var/tmp/kernel-debs && apt-get -q download "$@"' sh "${pkgs[@]}" >>"$log" 2>&1; then
    tail -3 "$log" >&2
    rig_say "$VM_KERNEL_SUITE offers: $(in_root "$tmp" apt-cache policy -t "$VM_KERNEL_SUITE" linux-image-amd64 2>/dev/null | awk '/Candidate/{print $2}')"
    rig_fail "cannot download kernel $VM_KERNEL_ABI $VM_KERNEL_VERSION: pin the offered version in versions.env"
  fi
  # unpacked, not installed: no initramfs-tools, no bootloader hooks; the modules land at their place
  for p in "$tmp"/var/tmp/kernel-debs/*.deb; do dpkg-deb -x "$p" "$tmp"; done
  rm -rf "$tmp/var/tmp/kernel-debs"
  chroot "$tmp" depmod "$VM_KERNEL_ABI" || rig_fail "depmod failed"
  mkdir -p "$RIG_DIR/boot"
  extract_vmlinux "$tmp/usr/lib/modules/$VM_KERNEL_ABI/vmlinuz" "$RIG_DIR/boot/vmlinux" chroot "$tmp" zstd ||
    rig_fail "cannot extract vmlinux from the kernel image ($?)"
  rig_say "kernel $VM_KERNEL_ABI $VM_KERNEL_VERSION: $((SECONDS - t)) s"
  mkdir -p "$tmp/run/sriov-rig" "$tmp/host" "$tmp/boot/sriov-rig" # mount points for run.sh
  in_root "$tmp" apt-get -q clean >/dev/null 2>&1 || true
  rm -rf "$tmp/var/lib/apt/lists/"*_Packages "$tmp/var/lib/apt/lists/"*_Translation-*
  chroot "$tmp" dpkg-query -W -f='${Package} ${Version}\n' qemu-system-x86 iproute2 ibverbs-utils \
    rdmacm-utils perftest busybox-static >"$RIG_DIR/versions.txt"
  rm -rf "$RIG_ROOT"
  mv "$tmp" "$RIG_ROOT"
  touch "$RIG_ROOT/.complete"
}


# ensure_initramfs prints the initramfs for guest/init: the root's static busybox, /init and the
# modules init needs before the root is reachable (9p over virtio, overlayfs), decompressed for
# busybox insmod, in dependency order.
ensure_initramfs() {
  local sum img
  sum=$(cat "$SETUP_HERE/guest/init" "$RIG_ROOT/bin/busybox" | sha256sum | cut -c1-12)
  img=$RIG_DIR/boot/initramfs-$sum.cpio.gz
  if [ ! -s "$img" ]; then
    local tmp
    tmp=$(mktemp -d "$RIG_ROOT/var/tmp/initramfs.XXXXXX")
    mkdir -p "$tmp/bin" "$tmp/modules"
    cp "$RIG_ROOT/bin/busybox" "$tmp/bin/busybox"
    cp "$SETUP_HERE/guest/init" "$tmp/init"
    chmod 0755 "$tmp/init"
    initramfs_modules "$tmp" "$RIG_ROOT" chroot "$RIG_ROOT"
    (cd "$tmp" && find . | chroot "$RIG_ROOT" cpio -o -H newc --quiet -D "${tmp#"$RIG_ROOT"}" | gzip -1) >"$img.tmp"
    mv "$img.tmp" "$img"
    rm -rf "$tmp"
  fi
  echo "$img"
}

# ensure_rig: everything above, under $RIG_CACHE/.lock; sets RIG_INITRD.
ensure_rig() {
  [ "$(id -u)" = 0 ] || rig_fail "needs root (chroot, mount namespaces)"
  mkdir -p "$RIG_CACHE"
  exec 7>"$RIG_CACHE/.lock"
  flock 7
  ensure_debootstrap
  ensure_root
  RIG_INITRD=$(ensure_initramfs)
  flock -u 7
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  t0=$SECONDS
  ensure_rig
  rig_say "rig ready in $RIG_DIR ($((SECONDS - t0)) s): $(tr '\n' ' ' <"$RIG_DIR/versions.txt")"
  echo "$RIG_DIR"
fi
