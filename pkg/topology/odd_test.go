package topology_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/railcni/rail/pkg/topology"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

func writeHost(t *testing.T, host fakesys.Host, opt fakesys.Options) (string, *fakesys.Spec) {
	t.Helper()
	root := filepath.Join(t.TempDir(), "root")
	spec, err := fakesys.WriteHost(root, t.Name(), host, opt)
	if err != nil {
		t.Fatalf("write host: %v", err)
	}
	return root, spec
}

func ibCard(name string, vfs ...fakesys.Func) fakesys.Slot {
	return fakesys.Slot{Card: &fakesys.Card{Funcs: []fakesys.Func{{RDMA: name, LinkLayer: "InfiniBand", VFs: vfs}}}}
}

// TestNVSwitchIsNotAGPU: NVSwitch bridges are bound to the nvidia driver
// but are not display or 3D controllers.
func TestNVSwitchIsNotAGPU(t *testing.T) {
	root, _ := writeHost(t, fakesys.Host{Roots: []fakesys.Root{{Bus: 0x10, Ports: []fakesys.Slot{
		{Other: &fakesys.Other{Vendor: "0x10de", Device: "0x1af1", Class: "0x068000", Driver: "nvidia"}},
		{GPU: &fakesys.GPU{}},
	}}}}, fakesys.Options{})
	m := discover(t, root)
	if len(m.GPUs) != 1 || m.GPUs[0].PCI != "0000:12:00.0" || m.GPUs[0].Index != 0 || len(m.Problems) != 0 {
		t.Fatalf("GPUs %+v problems %v, want only the GPU at 0000:12:00.0 as GPU0", m.GPUs, m.Problems)
	}
}

// TestVirtualFunctions: VFs are RDMA devices of their own, marked VF with
// their PF's address, placed beside the PF.
func TestVirtualFunctions(t *testing.T) {
	vf := fakesys.Func{RDMA: "mlx5_1", LinkLayer: "InfiniBand"}
	vf2 := fakesys.Func{RDMA: "mlx5_2", LinkLayer: "InfiniBand"}
	root, spec := writeHost(t, fakesys.Host{Roots: []fakesys.Root{{Bus: 0x10, Ports: []fakesys.Slot{
		{Switch: []fakesys.Slot{{GPU: &fakesys.GPU{}}, ibCard("mlx5_0", vf, vf2)}},
	}}}}, fakesys.Options{})
	m := discover(t, root)
	pf, _ := m.NICByName("mlx5_0")
	if pf.VF || pf.PF != "" {
		t.Errorf("mlx5_0 = VF %v PF %q, want a PF", pf.VF, pf.PF)
	}
	for _, name := range []string{"mlx5_1", "mlx5_2"} {
		n, ok := m.NICByName(name)
		want, _ := spec.NIC(name)
		if !ok || !n.VF || n.PF != pf.PCI || n.PCI != want.PCI || n.Netdev != want.Netdev || n.Netdev == "" {
			t.Errorf("%s = %+v, want VF of %s at %s", name, n, pf.PCI, want.PCI)
		}
		if c := m.Distance(m.GPUs[0], n); c != topology.PIX {
			t.Errorf("GPU0-%s = %s, want PIX like its PF", name, c)
		}
	}
	if len(m.Problems) != 0 {
		t.Errorf("problems %v", m.Problems)
	}
}

// TestSoftRoCEOnPCINetdev: rxe on a PCI NIC's netdev is placed where that
// NIC is, though it has no PCI function of its own.
func TestSoftRoCEOnPCINetdev(t *testing.T) {
	eth := fakesys.Slot{Card: &fakesys.Card{Funcs: []fakesys.Func{{RDMA: "mlx5_0", LinkLayer: "Ethernet", Netdev: "ens1np0"}}}}
	root, _ := writeHost(t, fakesys.Host{
		Roots:    []fakesys.Root{{Bus: 0x10, NUMA: 1, Ports: []fakesys.Slot{{Switch: []fakesys.Slot{{GPU: &fakesys.GPU{}}, eth}}}}},
		SoftRoCE: []fakesys.SoftRoCE{{RDMA: "rxe0", Netdev: "ens1np0"}},
	}, fakesys.Options{})
	m := discover(t, root)
	rxe, ok := m.NICByName("rxe0")
	if !ok || !rxe.Virtual || rxe.PCI != "" || rxe.Netdev != "ens1np0" || rxe.NUMA != 1 {
		t.Fatalf("rxe0 = %+v, want virtual on ens1np0, NUMA 1", rxe)
	}
	if c := m.Distance(m.GPUs[0], rxe); c != topology.PIX {
		t.Errorf("GPU0-rxe0 = %s, want PIX (its netdev's NIC is under the GPU's switch)", c)
	}
}

// TestMultiPortFunction: a function with two ports and two netdevs
// (mlx4 style), added by hand to a single-port card, is two targets, each
// port on the netdev whose dev_port matches. Before per-port targets the
// device was one NIC and port 2 could never be chosen.
func TestMultiPortFunction(t *testing.T) {
	root, _ := writeMachine(t, "lab-1x1", fakesys.Options{})
	ib := hostPath(t, root, "/sys/class/infiniband/mlx5_0")
	dev := hostPath(t, root, "/sys/class/infiniband/mlx5_0/device")
	for _, p := range []string{ib + "/ports/1/gid_attrs", ib + "/ports/2"} {
		mustRemove(t, p)
	}
	if err := os.MkdirAll(ib+"/ports/2", 0o755); err != nil {
		t.Fatal(err)
	}
	for file, text := range map[string]string{"state": "4: ACTIVE", "phys_state": "5: LinkUp", "link_layer": "Ethernet"} {
		mustWrite(t, filepath.Join(ib, "ports/2", file), text+"\n")
	}
	if err := os.MkdirAll(dev+"/net/ens1d1/", 0o755); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, dev+"/net/ens1d1/dev_port", "1\n")
	m := discover(t, root)
	for _, tc := range []struct{ name, netdev string }{{"mlx5_0", "ens1np0"}, {"mlx5_0:2", "ens1d1"}} {
		n, ok := m.NICByName(tc.name)
		if !ok || n.Netdev != tc.netdev || len(n.Ports) != 1 || !slices.Equal(n.Ports[0].Netdevs, []string{tc.netdev}) {
			t.Errorf("%s = %+v (found %v), want one port on %s", tc.name, n, ok, tc.netdev)
		}
	}
	if aff := m.Affinity(); aff[0] != "mlx5_0" || len(m.NICs) != 2 {
		t.Errorf("affinity %v over %d NICs, want GPU0 on mlx5_0 of 2 targets", aff, len(m.NICs))
	}
}

// TestDevNumbers: numbers come from `dev` even above 255, from `uevent`
// when `dev` is missing, and overrides reach the node's view.
func TestDevNumbers(t *testing.T) {
	root, _ := writeMachine(t, "h100x8-cx7x4", fakesys.Options{DevNumbers: map[string][2]uint32{
		"uverbs0": {511, 1048575}, "uverbs1": {231, 300}, "umad2": {231, 256}, "rdma_cm": {10, 1000},
	}})
	mustRemove(t, hostPath(t, root, "/sys/class/infiniband_verbs/uverbs1/dev"))
	m := discover(t, root)
	want := map[string][2]uint32{"mlx5_0": {511, 1048575}, "mlx5_1": {231, 300}, "mlx5_2": {231, 194}, "mlx5_3": {231, 195}}
	for name, nums := range want {
		n, _ := m.NICByName(name)
		if n.Uverbs == nil || n.Uverbs.Major != nums[0] || n.Uverbs.Minor != nums[1] {
			t.Errorf("%s uverbs = %+v, want %d:%d", name, n.Uverbs, nums[0], nums[1])
		}
	}
	n, _ := m.NICByName("mlx5_2")
	if u := n.Ports[0].Umad; u == nil || u.Major != 231 || u.Minor != 256 || u.Path != "/dev/infiniband/umad2" {
		t.Errorf("mlx5_2 umad = %+v, want 231:256 at /dev/infiniband/umad2", u)
	}
	if i := n.Ports[0].Issm; i == nil || i.Minor != 66 {
		t.Errorf("mlx5_2 issm = %+v, want minor 66", i)
	}
	if m.RdmaCM == nil || m.RdmaCM.Minor != 1000 {
		t.Errorf("rdma_cm = %+v, want minor 1000", m.RdmaCM)
	}
	if len(m.Problems) != 0 {
		t.Errorf("problems %v", m.Problems)
	}
}

// TestNetdevOverride: tests map NICs to netdevs they create.
func TestNetdevOverride(t *testing.T) {
	root, spec := writeMachine(t, "down-bond", fakesys.Options{Netdevs: map[string]string{
		"mlx5_0": "veth-a", "mlx5_bond_0": "veth-b",
	}})
	m := discover(t, root)
	for name, want := range map[string]string{"mlx5_0": "veth-a", "mlx5_bond_0": "veth-b", "mlx5_1": "ibp30s0"} {
		n, _ := m.NICByName(name)
		s, _ := spec.NIC(name)
		if n.Netdev != want || s.Netdev != want {
			t.Errorf("%s netdev = %q (spec %q), want %q", name, n.Netdev, s.Netdev, want)
		}
	}
	if bond, _ := m.NICByName("mlx5_bond_0"); !bond.Bond {
		t.Errorf("mlx5_bond_0 not marked as a bond")
	}
}

// TestBondByMaster: a RoCE LAG device not named mlx5_bond_N is still a
// bond when its netdev is a bonding master.
func TestBondByMaster(t *testing.T) {
	card := &fakesys.Card{Bond: "roce_lag0", Funcs: []fakesys.Func{{LinkLayer: "Ethernet"}, {LinkLayer: "Ethernet"}}}
	root, _ := writeHost(t, fakesys.Host{Roots: []fakesys.Root{{Bus: 0x10, Ports: []fakesys.Slot{{Card: card}}}}}, fakesys.Options{})
	m := discover(t, root)
	n, ok := m.NICByName("roce_lag0")
	if !ok || !n.Bond || n.Netdev != "bond0" || n.PCI != "0000:11:00.0" {
		t.Fatalf("roce_lag0 = %+v, want a bond on bond0 at 0000:11:00.0", n)
	}
}
