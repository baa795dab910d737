package vfnetdev

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/railcni/rail/pkg/topology/fakesys"
)

// TestRebindDriver finds an IB VF's PCI address through its PF's virtfn
// link, writes it to its driver's unbind and bind files, finds its netdev,
// and refuses a VF without a driver, naming the fix.
func TestRebindDriver(t *testing.T) {
	root := t.TempDir()
	spec, err := fakesys.Write(root, "h100x2-cx7ib-sriov", fakesys.Options{})
	if err != nil {
		t.Fatal(err)
	}
	pf := spec.PFs[1]
	pci, err := PCIAddress(root, pf.Netdev, 3)
	if err != nil || pci != pf.VFs[3].PCI {
		t.Fatalf("PCIAddress = %q, %v; want %s", pci, err, pf.VFs[3].PCI)
	}
	if _, err := PCIAddress(root, pf.Netdev, 9); err == nil {
		t.Errorf("PCIAddress of VF 9 of a 4-VF PF worked")
	}
	if err := RebindDriver(root, pci); err != nil {
		t.Fatalf("RebindDriver: %v", err)
	}
	for _, f := range []string{"unbind", "bind"} {
		if b, err := os.ReadFile(filepath.Join(root, "sys/bus/pci/drivers/mlx5_core", f)); err != nil || string(b) != pci {
			t.Errorf("%s holds %q (%v), want %s", f, b, err, pci)
		}
	}
	if name, err := netdevName(root, pci); err != nil || name != pf.VFs[3].Netdev {
		t.Errorf("netdevName = %q, %v; want %s", name, err, pf.VFs[3].Netdev)
	}
	if got := RDMADevice(root, pci, "known"); got != pf.VFs[3].RDMA && pf.VFs[3].RDMA != "" {
		t.Errorf("RDMADevice = %q, want %s", got, pf.VFs[3].RDMA)
	}
	if err := os.Remove(filepath.Join(root, "sys/bus/pci/devices", pci, "driver")); err != nil {
		t.Fatal(err)
	}
	if err := RebindDriver(root, pci); err == nil || !strings.Contains(err.Error(), "has no driver to rebind") {
		t.Errorf("RebindDriver without a driver = %v", err)
	}
}
