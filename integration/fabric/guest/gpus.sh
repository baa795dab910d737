#!/bin/bash
# gpus.sh bind NODE | unbind : makes the guest's display-class PCI functions (run.sh's bochs-display
# stand-ins, one beside each NIC under its root port) look as the nvidia driver makes GPUs look to
# anything that reads sysfs and procfs: a link per GPU in /sys/bus/pci/drivers/nvidia to its real
# PCI function, and /proc/driver/nvidia/gpus/<BDF>/information (UUID, minor). Every other driver
# directory stays the kernel's own (bind-mounted back). Their places in the PCIe tree are the
# guest's real ones; only the driver is a stand-in (no GPU driver runs under TCG). GPUs are
# numbered in PCI bus order, as nvidia-smi numbers them.
set -euo pipefail
drivers=/sys/bus/pci/drivers
real=/run/rail-fabric-pci-drivers
case $1 in
bind)
  node=$2
  mkdir -p "$real"
  mount --bind "$drivers" "$real"
  mount -t tmpfs -o mode=0755 rail-gpu-standin "$drivers"
  for d in "$real"/*; do
    mkdir "$drivers/${d##*/}"
    mount --bind "$d" "$drivers/${d##*/}"
  done
  mkdir "$drivers/nvidia"
  mount -t tmpfs -o mode=0755 rail-gpu-standin /proc/driver
  i=0
  for dev in /sys/bus/pci/devices/*; do
    case $(cat "$dev/class") in 0x03*) ;; *) continue ;; esac
    bdf=${dev##*/}
    path=$(readlink -f "$dev")
    ln -s "../../../..${path#/sys}" "$drivers/nvidia/$bdf" # the kernel's own form
    mkdir -p "/proc/driver/nvidia/gpus/$bdf"
    printf 'Model: \t\t NVIDIA stand-in\nIRQ:   \t\t 0\nGPU UUID: \t GPU-fab%05x-0000-4000-8000-%012d\nDevice Minor: \t %d\nBus Location: \t %s\n' \
      "$(printf '%d' "'$node")" "$i" "$i" "$bdf" >"/proc/driver/nvidia/gpus/$bdf/information"
    echo "GPU $i $bdf"
    i=$((i + 1))
  done
  [ "$i" = 2 ] || { echo "found $i display-class functions, want 2 (run.sh's gpu0 and gpu1)" >&2; exit 1; }
  ;;
unbind)
  umount /proc/driver
  umount "$drivers/nvidia" 2>/dev/null || true
  for d in "$real"/*; do umount "$drivers/${d##*/}"; done
  umount "$drivers"
  umount "$real"
  ;;
*) echo "usage: $0 bind NODE | unbind" >&2; exit 2 ;;
esac
