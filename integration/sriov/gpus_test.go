package sriov

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// rigGPUs are the rig's two display-class PCI functions (run.sh): gpu0
// beside pf0 under its root port, gpu1 behind the PCIe switch with pf1 and
// pf2. Their places in the PCIe tree are the guest's real ones; only the
// driver is a stand-in (no GPU driver runs under TCG). In PCI bus order
// they are GPU 0 and GPU 1, as nvidia-smi numbers them.
var rigGPUs = []struct{ pci, uuid string }{
	{"0000:01:00.1", "GPU-5a000001-0000-4000-8000-000000000000"},
	{"0000:06:00.0", "GPU-5a000006-0000-4000-8000-000000000000"},
}

const (
	pciDrivers = "/sys/bus/pci/drivers"
	// realDrivers is where the kernel's pci drivers directory stays
	// reachable while a tmpfs holds the stand-in's view of it.
	realDrivers = "/run/rail-rig-pci-drivers"
)

// bindGPUStandIn makes the rig's display functions look, to anything that
// reads sysfs and procfs, as the nvidia driver makes a GPU look: a link per
// GPU in /sys/bus/pci/drivers/nvidia to its real PCI function, and
// /proc/driver/nvidia/gpus/<BDF>/information with its UUID and minor.
// Every other driver directory stays the kernel's own (bind-mounted back),
// so the VFs' igbvf and the PFs' igb read as before. The cleanup undoes
// it all.
func bindGPUStandIn(t *testing.T) {
	t.Helper()
	for _, g := range rigGPUs {
		class, err := os.ReadFile("/sys/bus/pci/devices/" + g.pci + "/class")
		if err != nil || !strings.HasPrefix(string(class), "0x03") {
			t.Fatalf("GPU %s: class %q, %v: want a display-class function (run.sh's bochs-display)", g.pci, class, err)
		}
	}
	drivers, err := os.ReadDir(pciDrivers)
	if err != nil {
		t.Fatal(err)
	}
	var mounted []string // unmounted in reverse order
	t.Cleanup(func() {
		for i := len(mounted) - 1; i >= 0; i-- {
			if _, err := run("umount", mounted[i]); err != nil {
				t.Error(err)
			}
		}
	})
	mount := func(target string, args ...string) {
		t.Helper()
		if _, err := run(append(append([]string{"mount"}, args...), target)...); err != nil {
			t.Fatal(err)
		}
		mounted = append(mounted, target)
	}
	if err := os.MkdirAll(realDrivers, 0o755); err != nil {
		t.Fatal(err)
	}
	mount(realDrivers, "--bind", pciDrivers)
	mount(pciDrivers, "-t", "tmpfs", "-o", "mode=0755", "rail-gpu-standin")
	for _, d := range drivers {
		dir := filepath.Join(pciDrivers, d.Name())
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		mount(dir, "--bind", filepath.Join(realDrivers, d.Name()))
	}
	nvidia := filepath.Join(pciDrivers, "nvidia")
	if err := os.Mkdir(nvidia, 0o755); err != nil {
		t.Fatal(err)
	}
	mount("/proc/driver", "-t", "tmpfs", "-o", "mode=0755", "rail-gpu-standin")
	for i, g := range rigGPUs {
		dev, err := filepath.EvalSymlinks("/sys/bus/pci/devices/" + g.pci)
		if err != nil {
			t.Fatal(err)
		}
		// the kernel's own form: ../../../../devices/pci0000:00/…/<BDF>
		if err := os.Symlink("../../../.."+strings.TrimPrefix(dev, "/sys"), filepath.Join(nvidia, g.pci)); err != nil {
			t.Fatal(err)
		}
		info := filepath.Join("/proc/driver/nvidia/gpus", g.pci)
		if err := os.MkdirAll(info, 0o755); err != nil {
			t.Fatal(err)
		}
		text := fmt.Sprintf("Model: \t\t NVIDIA stand-in\nIRQ:   \t\t 0\nGPU UUID: \t %s\nDevice Minor: \t %d\nBus Location: \t %s\n", g.uuid, i, g.pci)
		if err := os.WriteFile(filepath.Join(info, "information"), []byte(text), 0o444); err != nil {
			t.Fatal(err)
		}
	}
}
