package fakesys

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSRIOVLayout checks the SR-IOV files against what the kernel shows
// (the SR-IOV VM rig's guest, integration/sriov/README.md): each VF a
// PCI function beside its PF under the same bridge, at the routing ID
// sriov_offset and sriov_stride give, with relative physfn / virtfnN
// links, its driver, its netdev and (mlx5) its RDMA device below it.
func TestSRIOVLayout(t *testing.T) {
	root := t.TempDir()
	spec, err := Write(root, "sriov-vm-igb", Options{})
	if err != nil {
		t.Fatal(err)
	}
	pf0 := spec.PFs[0]
	read := func(p string) string {
		b, err := os.ReadFile(filepath.Join(root, p))
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(b))
	}
	readlink := func(p string) string {
		l, err := os.Readlink(filepath.Join(root, p))
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	dev := "/sys/bus/pci/devices/" + pf0.PCI
	for file, want := range map[string]string{"sriov_totalvfs": "7", "sriov_numvfs": "4", "sriov_offset": "128",
		"sriov_stride": "2", "sriov_drivers_autoprobe": "1", "sriov_vf_device": "10ca"} {
		if got := read(dev + "/" + file); got != want {
			t.Errorf("%s = %q, want %q", file, got, want)
		}
	}
	if pf0.PCI != "0000:01:00.0" || pf0.VFs[0].PCI != "0000:01:10.0" || pf0.VFs[3].PCI != "0000:01:10.6" {
		t.Errorf("pf0 %s, its VFs %s … %s: want 0000:01:00.0 with 0000:01:10.0 … 0000:01:10.6 as on the rig", pf0.PCI, pf0.VFs[0].PCI, pf0.VFs[3].PCI)
	}
	if got := readlink(dev + "/virtfn2"); got != "../0000:01:10.4" {
		t.Errorf("virtfn2 -> %s, want ../0000:01:10.4", got)
	}
	vf := "/sys/bus/pci/devices/" + pf0.VFs[2].PCI
	if got := readlink(vf + "/physfn"); got != "../0000:01:00.0" {
		t.Errorf("physfn -> %s, want ../0000:01:00.0", got)
	}
	if got := filepath.Base(readlink(vf + "/driver")); got != "igbvf" {
		t.Errorf("VF driver %s, want igbvf", got)
	}
	real, err := filepath.EvalSymlinks(filepath.Join(root, vf))
	if err != nil || filepath.Dir(real) != filepath.Join(root, "sys/devices/pci0000:00/0000:00:01.0") {
		t.Errorf("VF at %s (%v), want beside its PF below the root port", real, err)
	}
	if _, err := os.Stat(filepath.Join(root, vf, "net", pf0.VFs[2].Netdev)); err != nil {
		t.Errorf("VF netdev: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, vf, "infiniband")); !os.IsNotExist(err) {
		t.Errorf("an igbvf VF has an RDMA device (%v)", err)
	}

	root = t.TempDir()
	spec, err = Write(root, "h100x8-cx7x8-sriov", Options{})
	if err != nil {
		t.Fatal(err)
	}
	mlx := spec.PFs[0]
	vf = "/sys/bus/pci/devices/" + mlx.VFs[1].PCI
	if read("/sys/bus/pci/devices/"+mlx.PCI+"/sriov_offset") != "1" || mlx.VFs[1].PCI != mlx.PCI[:len(mlx.PCI)-1]+"2" {
		t.Errorf("mlx5 PF %s VF1 %s: want offset 1 stride 1 (ARI)", mlx.PCI, mlx.VFs[1].PCI)
	}
	if got := read(vf + "/infiniband/" + mlx.VFs[1].RDMA + "/hca_type"); got != "MT4126" {
		t.Errorf("VF RDMA device hca_type %q, want MT4126 (ConnectX VF)", got)
	}
	vfio := spec.PFs[6].VFs[3]
	if vfio.Driver != "vfio-pci" || vfio.Netdev != "" || vfio.RDMA != "" {
		t.Errorf("vfio VF %+v", vfio)
	}
	if _, err := os.Stat(filepath.Join(root, "/sys/bus/pci/devices", vfio.PCI, "net")); !os.IsNotExist(err) {
		t.Errorf("a vfio-pci VF has a net directory (%v)", err)
	}
	if spec.PFs[7].TotalVFs != 4 || len(spec.PFs[7].VFs) != 0 || read("/sys/bus/pci/devices/"+spec.PFs[7].PCI+"/sriov_numvfs") != "0" {
		t.Errorf("mlx5_7's PF %+v: want sriov_numvfs 0 of 4", spec.PFs[7])
	}
}
