# Sourced by integration/vm/setup.sh and integration/sriov/setup.sh: what both rigs do with Debian.

# host_debian_mirror [OVERRIDE] prints OVERRIDE when set, else the Debian archive the host's apt
# uses, else deb.debian.org.
host_debian_mirror() {
  if [ -n "${1:-}" ]; then echo "$1"; return; fi
  local m
  m=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null |
    grep -v '^[[:space:]]*#' | grep -Eo 'https?://[^ ]+/debian/?( |$)' | head -1 | tr -d ' ' || true)
  echo "${m:-http://deb.debian.org/debian}"
}

# extract_vmlinux BZIMAGE OUT [ZSTD...]: the compressed payload's place is in the x86 boot header (setup_sects
# at 0x1f1, payload_offset at 0x248, payload_length at 0x24c); the payload ends with 4 bytes of size.
# ZSTD is the zstd command to run (default zstd; the SR-IOV rig runs its root's).
extract_vmlinux() {
  local img=$1 out=$2 sects off len start magic
  shift 2
  local zstd=("$@")
  [ ${#zstd[@]} -gt 0 ] || zstd=(zstd)
  sects=$(od -An -tu1 -j $((0x1f1)) -N1 "$img" | tr -d ' ')
  off=$(od -An -tu4 -j $((0x248)) -N4 "$img" | tr -d ' ')
  len=$(od -An -tu4 -j $((0x24c)) -N4 "$img" | tr -d ' ')
  [ "$sects" = 0 ] && sects=4
  start=$(((sects + 1) * 512 + off))
  magic=$(od -An -tx1 -j "$start" -N4 "$img" | tr -d ' ')
  case $magic in
    28b52ffd) tail -c +$((start + 1)) "$img" | head -c $((len - 4)) | "${zstd[@]}" -dcq >"$out.tmp" ;;
    fd377a58) tail -c +$((start + 1)) "$img" | head -c $((len - 4)) | xz -dcq >"$out.tmp" ;;
    1f8b*) tail -c +$((start + 1)) "$img" | head -c $((len - 4)) | gzip -dcq >"$out.tmp" ;;
    *) return 2 ;;
  esac
  [ "$(od -An -tx1 -N4 "$out.tmp" | tr -d ' ')" = 7f454c46 ] || { rm -f "$out.tmp"; return 3; }
  mv "$out.tmp" "$out"
}

# initramfs_modules DIR CPPREFIX CMD...: the modules the guest's init needs before its root is
# reachable (9p over virtio, overlayfs) and what they depend on, decompressed for busybox insmod,
# into DIR/modules with their order in DIR/modules/load-order. CMD runs modprobe, xz and zstd
# (`modprobe -d KERNELTREE` on the host, or `chroot ROOT` for a root's own); CPPREFIX is put before
# the paths modprobe prints to read them from here.
initramfs_modules() {
  local dir=$1 prefix=$2 ko name
  shift 2
  local cmd=("$@")
  local probe=("${cmd[@]}")
  [ "${cmd[0]}" = modprobe ] && cmd=()
  [ "${probe[0]}" = modprobe ] || probe+=(modprobe)
  mkdir -p "$dir/modules"
  for ko in $("${probe[@]}" -S "$VM_KERNEL_ABI" --show-depends -a 9pnet_virtio 9p overlay |
    awk '$1 == "insmod" && !seen[$2]++ {print $2}'); do
    name=$(basename "$ko")
    name=${name%.xz}
    name=${name%.zst}
    case $ko in
      *.xz) "${cmd[@]}" xz -dc "$ko" >"$dir/modules/$name" ;;
      *.zst) "${cmd[@]}" zstd -dcq "$ko" >"$dir/modules/$name" ;;
      *) cp "$prefix$ko" "$dir/modules/$name" ;;
    esac
    echo "$name" >>"$dir/modules/load-order"
  done
}
