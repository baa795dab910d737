package topology_test

import (
	"testing"

	"github.com/railcni/rail/pkg/topology"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

// TestSRIOVMatchesSpec checks every SR-IOV PF and VF discovered against
// what fakesys wrote: counts, indices, netdevs, RDMA devices, drivers.
func TestSRIOVMatchesSpec(t *testing.T) {
	for _, tt := range []struct {
		machine  string
		pfs      int
		numZero  string // a PF with sriov_numvfs 0 ("" none)
		vfio     string // a VF bound to vfio-pci ("" none)
		withRDMA bool   // VFs have their own RDMA devices
		ib       bool   // InfiniBand PFs: the PF's NIC and each VF's RDMA device say so
	}{
		{machine: "h100x8-cx7x8-sriov", pfs: 8, numZero: "mlx5_7", vfio: "mlx5_6", withRDMA: true},
		{machine: "sriov-vm-igb", pfs: 3},
		{machine: "h100x2-cx7ib-sriov", pfs: 2, withRDMA: true, ib: true},
		{machine: "gpu8-nic8"}, // no SR-IOV at all
	} {
		t.Run(tt.machine, func(t *testing.T) {
			root, spec := writeMachine(t, tt.machine, fakesys.Options{})
			m := discover(t, root)
			if len(m.PFs) != tt.pfs || len(spec.PFs) != tt.pfs {
				t.Fatalf("%d PFs discovered, %d written, want %d", len(m.PFs), len(spec.PFs), tt.pfs)
			}
			for i, want := range spec.PFs {
				got := m.PFs[i]
				if got.PCI != want.PCI || got.Netdev != want.Netdev || got.Driver != want.Driver ||
					got.TotalVFs != want.TotalVFs || got.NumVFs != len(want.VFs) || len(got.VFs) != len(want.VFs) {
					t.Fatalf("PF %d = %+v, spec %+v", i, got, want)
				}
				for k, wv := range want.VFs {
					gv := got.VFs[k]
					if gv != (topology.VF{Index: wv.Index, PCI: wv.PCI, PF: want.PCI, Netdev: wv.Netdev, RDMA: wv.RDMA, Driver: wv.Driver}) {
						t.Errorf("PF %s VF %d = %+v, spec %+v", want.PCI, k, gv, wv)
					}
					if tt.withRDMA && wv.Driver != topology.VFIODriver && gv.RDMA == "" {
						t.Errorf("VF %s has no RDMA device", gv.PCI)
					}
					if vfByPCI, ok := m.VFByPCI(gv.PCI); !ok || vfByPCI != gv {
						t.Errorf("VFByPCI(%s) = %+v %v", gv.PCI, vfByPCI, ok)
					}
					if own, ok := m.NICByName(gv.RDMA); tt.ib && (!ok || own.LinkLayer != topology.InfiniBand) {
						t.Errorf("VF %s's RDMA device %s = %+v (%v), want an InfiniBand port", gv.PCI, gv.RDMA, own, ok)
					}
				}
				nic, ok := m.PFNIC(got)
				if got.Netdev == "pf2" { // the rig's sniffer: no rxe on it
					if ok {
						t.Errorf("PF pf2 stands for NIC %s, want none", nic.Name)
					}
					continue
				}
				if tt.ib && nic.LinkLayer != topology.InfiniBand {
					t.Errorf("PF %s's NIC link layer %q, want InfiniBand", got.PCI, nic.LinkLayer)
				}
				if !ok || (want.RDMA != "" && nic.Name != want.RDMA) {
					t.Errorf("PF %s stands for NIC %q (%v), want %q or its rxe", got.PCI, nic.Name, ok, want.RDMA)
				}
			}
			checkSpecials(t, m, tt.numZero, tt.vfio)
		})
	}
}

// checkSpecials checks the PF whose NIC is numZero has no VF enabled, and
// that the PF whose NIC is vfio has its last VF bound to vfio-pci, with no
// netdev or RDMA device and not attachable.
func checkSpecials(t *testing.T, m *topology.Machine, numZero, vfio string) {
	t.Helper()
	for _, pf := range m.PFs {
		nic, ok := m.PFNIC(pf)
		if !ok {
			continue
		}
		switch nic.Name {
		case numZero:
			if pf.NumVFs != 0 || len(pf.VFs) != 0 || pf.TotalVFs != 4 {
				t.Errorf("PF %s (%s) = %+v, want sriov_numvfs 0 of 4", pf.PCI, nic.Name, pf)
			}
		case vfio:
			last := pf.VFs[len(pf.VFs)-1]
			if last.Driver != topology.VFIODriver || last.Netdev != "" || last.RDMA != "" || last.Attachable() == "" {
				t.Errorf("vfio VF = %+v (attachable: %q)", last, last.Attachable())
			}
		}
	}
}

// TestVFDistanceIsItsPF: a VF's RDMA device sits where its PF does, so
// every GPU sees them at the same class, and VFs stay NICs of their own
// (VF set, PF its PF's address) as move mode has always seen them.
func TestVFDistanceIsItsPF(t *testing.T) {
	root, _ := writeMachine(t, "h100x8-cx7x8-sriov", fakesys.Options{})
	m := discover(t, root)
	for _, pf := range m.PFs {
		pfNIC, ok := m.PFNIC(pf)
		if !ok {
			t.Fatalf("PF %s has no NIC", pf.PCI)
		}
		for _, vf := range pf.VFs {
			if vf.RDMA == "" {
				continue
			}
			vfNIC, ok := m.NICByName(vf.RDMA)
			if !ok || !vfNIC.VF || vfNIC.PF != pf.PCI || vfNIC.PCI != vf.PCI {
				t.Fatalf("VF NIC %s = %+v", vf.RDMA, vfNIC)
			}
			for _, g := range m.GPUs {
				a := m.Distance(g, pfNIC)
				b := m.Distance(g, vfNIC)
				if a != b {
					t.Errorf("GPU%d: PF %s %v, its VF %s %v", g.Index, pfNIC.Name, a, vfNIC.Name, b)
				}
			}
		}
	}
}

// TestSRIOVLive: VFs created and removed while the machine runs (what
// writing sriov_numvfs does) are read again by DiscoverPF and NetdevPF,
// and WithPF replaces only that PF.
func TestSRIOVLive(t *testing.T) {
	root, spec := writeMachine(t, "h100x8-cx7x8-sriov", fakesys.Options{})
	m := discover(t, root)
	sys, err := topology.OpenSysfs(root)
	if err != nil {
		t.Fatal(err)
	}
	var zero, four topology.PF
	for _, pf := range m.PFs {
		switch nic, _ := m.PFNIC(pf); nic.Name {
		case "mlx5_7":
			zero = pf
		case "mlx5_0":
			four = pf
		}
	}
	vfs := []fakesys.Func{{RDMA: "mlx5_40", LinkLayer: "Ethernet"}, {RDMA: "mlx5_41", LinkLayer: "Ethernet"}}
	written, err := fakesys.SetVFs(root, zero.PCI, "ConnectX-7", vfs)
	if err != nil {
		t.Fatal(err)
	}
	got, _, ok := sys.DiscoverPF(zero.PCI)
	if !ok || got.NumVFs != 2 || len(got.VFs) != 2 || got.VFs[1].RDMA != "mlx5_41" || got.VFs[1].PCI != written[1].PCI || got.VFs[1].Netdev == "" {
		t.Fatalf("after enabling 2 VFs: %+v", got)
	}
	if pf := sys.NetdevPF(got.VFs[0].Netdev); pf != zero.PCI {
		t.Errorf("NetdevPF(%s) = %q, want %s", got.VFs[0].Netdev, pf, zero.PCI)
	}
	if pf := sys.NetdevPF(spec.NICs[0].Netdev); pf != "" {
		t.Errorf("NetdevPF of a PF's netdev = %q, want none", pf)
	}
	next := m.WithPF(got, true, nil)
	if p, _ := next.PFByPCI(zero.PCI); len(p.VFs) != 2 || len(next.PFs) != len(m.PFs) || next.PFs[0].PCI != m.PFs[0].PCI {
		t.Errorf("WithPF: %+v", next.PFs)
	}
	if p, _ := m.PFByPCI(zero.PCI); len(p.VFs) != 0 {
		t.Error("WithPF changed the machine it was called on")
	}
	if _, err := fakesys.SetVFs(root, four.PCI, "ConnectX-7", nil); err != nil {
		t.Fatal(err)
	}
	got, _, ok = sys.DiscoverPF(four.PCI)
	if !ok || got.NumVFs != 0 || len(got.VFs) != 0 {
		t.Fatalf("after disabling VFs: %+v", got)
	}
	again := discover(t, root)
	for _, vf := range four.VFs {
		if _, ok := again.NICByName(vf.RDMA); ok {
			t.Errorf("VF RDMA device %s still discovered after its VF went", vf.RDMA)
		}
	}
	if _, ok := again.NICByName("mlx5_41"); !ok {
		t.Error("new VF's RDMA device mlx5_41 not discovered")
	}
	if _, err := fakesys.SetVFs(root, zero.PCI, "ConnectX-7", make([]fakesys.Func, 5)); err == nil {
		t.Error("5 VFs on a PF of sriov_totalvfs 4: no error")
	}
	if _, _, ok := sys.DiscoverPF(spec.GPUs[0].PCI); ok {
		t.Errorf("a GPU read as an SR-IOV PF")
	}
}
