package inventory

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/railcni/rail/daemon/linkfilter"
	"github.com/railcni/rail/pkg/topology"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

// pfOf finds the PF whose own RDMA device is nic.
func pfOf(t *testing.T, m *topology.Machine, nic string) topology.PF {
	t.Helper()
	for _, pf := range m.PFs {
		if n, ok := m.PFNIC(pf); ok && n.Name == nic {
			return pf
		}
	}
	t.Fatalf("no PF of %s", nic)
	return topology.PF{}
}

// TestRunFollowsVFs: VFs enabled and disabled while raild runs (sriov_numvfs
// written, which adds or removes the VF netdevs: link events) are seen from
// those events alone, each reading only its PF, never the whole node; an
// event of a link no VF or NIC owns reads nothing.
func TestRunFollowsVFs(t *testing.T) {
	root := filepath.Join(t.TempDir(), "root")
	if _, err := fakesys.Write(root, "h100x8-cx7x8-sriov", fakesys.Options{}); err != nil {
		t.Fatal(err)
	}
	inv, err := New(root, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	zero, four := pfOf(t, inv.Machine(), "mlx5_7"), pfOf(t, inv.Machine(), "mlx5_0")
	events := make(chan LinkEvent)
	published := make(chan *Snapshot, 16)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		inv.Run(ctx, Watch{Events: Chan(events), Published: func(s *Snapshot) { published <- s }})
	}()
	t.Cleanup(func() { cancel(); <-done })

	events <- LinkEvent{Name: "veth-pod1", Index: 50} // no NIC's, no VF's
	vfs, err := fakesys.SetVFs(root, zero.PCI, "ConnectX-7", []fakesys.Func{
		{RDMA: "mlx5_40", LinkLayer: "Ethernet"}, {RDMA: "mlx5_41", LinkLayer: "Ethernet"},
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, vf := range vfs {
		events <- LinkEvent{Name: vf.Netdev, Index: 100 + i}
	}
	waitFor(t, published, "mlx5_7's two new VFs and their RDMA devices", func(s *Snapshot) bool {
		pf, _ := s.Machine.PFByPCI(zero.PCI)
		_, nic := s.Machine.NICByName("mlx5_41")
		return pf.NumVFs == 2 && len(pf.VFs) == 2 && pf.VFs[1].Netdev == vfs[1].Netdev && pf.VFs[1].RDMA == "mlx5_41" && nic
	})

	if _, err := fakesys.SetVFs(root, four.PCI, "ConnectX-7", nil); err != nil {
		t.Fatal(err)
	}
	for i, vf := range four.VFs {
		events <- LinkEvent{Name: vf.Netdev, Index: 200 + i, Gone: true}
	}
	snap := waitFor(t, published, "mlx5_0's VFs gone", func(s *Snapshot) bool {
		pf, _ := s.Machine.PFByPCI(four.PCI)
		_, vfNIC := s.Machine.NICByName(four.VFs[3].RDMA)
		return pf.NumVFs == 0 && len(pf.VFs) == 0 && !vfNIC
	})
	if pf, _ := snap.Machine.PFByPCI(zero.PCI); len(pf.VFs) != 2 {
		t.Errorf("mlx5_7's VFs lost when mlx5_0's went: %+v", pf)
	}
	cancel()
	<-done
	st := inv.Stats()
	if st.FullRescans != 1 || st.PFReads == 0 || st.Ignored != 1 {
		t.Errorf("stats %+v: want the one start rescan, PF reads, the veth ignored", st)
	}
}

// igbRig is the SR-IOV rig's guest as a fake machine, with an inventory
// of it.
func igbRig(t *testing.T) (string, *fakesys.Spec, *Inventory) {
	t.Helper()
	root := filepath.Join(t.TempDir(), "root")
	spec, err := fakesys.Write(root, "sriov-vm-igb", fakesys.Options{})
	if err != nil {
		t.Fatal(err)
	}
	inv, err := New(root, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return root, spec, inv
}

// TestVFFilter: which events ask for which PF, and when for one VF of it
// alone (a VF the snapshot knows by its netdev's name).
func TestVFFilter(t *testing.T) {
	_, spec, inv := igbRig(t)
	pf0, pf2 := spec.PFs[0], spec.PFs[2]
	f := newEventFilter(inv.sys)
	snap := inv.Current()
	whole := func(pf string) string { return "whole " + pf }
	alone := func(pf, vf string) string { return "alone " + pf + " " + vf }
	for _, tt := range []struct {
		name string
		ev   LinkEvent
		want string // "" nothing
	}{
		{"a VF's netdev appears", LinkEvent{Name: pf0.VFs[0].Netdev, Index: 10}, alone(pf0.PCI, pf0.VFs[0].PCI)},
		{"the same event again", LinkEvent{Name: pf0.VFs[0].Netdev, Index: 10}, ""},
		{"it changes state", LinkEvent{Name: pf0.VFs[0].Netdev, Index: 10, State: linkfilter.State{Flags: 1}}, alone(pf0.PCI, pf0.VFs[0].PCI)},
		{"it is renamed (known by ifindex only)", LinkEvent{Name: "net1", Index: 10, State: linkfilter.State{Flags: 1}}, whole(pf0.PCI)},
		{"it goes (into a pod)", LinkEvent{Name: "net1", Index: 10, Gone: true}, whole(pf0.PCI)},
		{"a PF's own netdev", LinkEvent{Name: pf0.Netdev, Index: 2}, ""},
		{"a veth", LinkEvent{Name: "veth1", Index: 30}, ""},
		{"an unknown link goes", LinkEvent{Name: "veth1", Index: 30, Gone: true}, ""},
		{"another PF's VF", LinkEvent{Name: pf2.VFs[1].Netdev, Index: 40}, alone(pf2.PCI, pf2.VFs[1].PCI)},
	} {
		c := f.classify(snap, tt.ev)
		var got []string
		for _, pf := range c.pfs {
			got = append(got, whole(pf))
		}
		for pf, vfs := range c.vfs {
			for _, vf := range vfs {
				got = append(got, alone(pf, vf))
			}
		}
		if want := []string{tt.want}; (tt.want == "" && len(got) != 0) || (tt.want != "" && !slices.Equal(got, want)) {
			t.Errorf("%s: asks %v, want %q", tt.name, got, tt.want)
		}
	}
}

// TestVFsReadAlone: a VF's netdev moving into a pod and back is read as
// that VF alone, its PF's other VFs not read again; a PF whose
// sriov_numvfs changed meanwhile, or whose VF's function is gone, is read
// whole.
func TestVFsReadAlone(t *testing.T) {
	root, spec, inv := igbRig(t)
	pf0 := spec.PFs[0]
	vf := pf0.VFs[1]
	// the VF's netdev leaves for a pod: its net/ directory is empty
	netDir := filepath.Join(root, "sys/bus/pci/devices", vf.PCI, "net")
	must(t, os.Rename(filepath.Join(netDir, vf.Netdev), filepath.Join(t.TempDir(), "aside")))
	snap, published := inv.UpdateVFs("test", map[string][]string{pf0.PCI: {vf.PCI}})
	got, _ := snap.Machine.VFByPCI(vf.PCI)
	if !published || got.Netdev != "" {
		t.Fatalf("VF %s after its netdev left: %+v (published %v), want no netdev", vf.PCI, got, published)
	}
	if st := inv.Stats(); st.PFReads != 0 || st.VFReads != 1 {
		t.Errorf("stats %+v: want one VF read alone, no PF read", st)
	}
	// sriov_numvfs changed: the PF is read whole
	if _, err := fakesys.SetVFs(root, pf0.PCI, "82576", nil); err != nil {
		t.Fatal(err)
	}
	snap, _ = inv.UpdateVFs("test", map[string][]string{pf0.PCI: {vf.PCI}})
	if pf, _ := snap.Machine.PFByPCI(pf0.PCI); pf.NumVFs != 0 || len(pf.VFs) != 0 {
		t.Errorf("PF after sriov_numvfs 0: %+v, want no VFs", pf)
	}
	if st := inv.Stats(); st.PFReads != 1 {
		t.Errorf("stats %+v: want the PF read whole once", st)
	}
}

// TestRunFollowsVFsOnLinkEvents: real link events, as the kernel sends
// them when sriov_numvfs is written (veths standing in for the VF
// netdevs an igb PF gets), are all it takes for the inventory to see the
// PF's VFs come and go: no timer, no full rescan.
func TestRunFollowsVFsOnLinkEvents(t *testing.T) {
	ns, h := testNetns(t)
	base := fmt.Sprintf("ryvf%d", os.Getpid()%100000)
	root := filepath.Join(t.TempDir(), "root")
	spec, err := fakesys.Write(root, "sriov-vm-igb", fakesys.Options{})
	must(t, err)
	pf := spec.PFs[2] // pf2: 2 VFs of at most 7
	published := make(chan *Snapshot, 16)
	inv := watching(t, ns, root, Watch{Settle: 20 * time.Millisecond, Published: func(s *Snapshot) { published <- s }})
	var vfs []fakesys.Func
	var veths []*netlink.Veth
	for k := range 4 {
		name := fmt.Sprintf("%sv%d", base, k)
		vfs = append(vfs, fakesys.Func{LinkLayer: "Ethernet", NoRDMA: true, Netdev: name})
		veths = append(veths, &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: name}, PeerName: fmt.Sprintf("%sp%d", base, k)})
	}
	_, err = fakesys.SetVFs(root, pf.PCI, fakesys.IntelIGB, vfs)
	must(t, err)
	for _, v := range veths {
		must(t, h.LinkAdd(v))
	}
	waitFor(t, published, "pf2 with 4 VFs", func(s *Snapshot) bool {
		p, _ := s.Machine.PFByPCI(pf.PCI)
		return p.NumVFs == 4 && len(p.VFs) == 4 && p.VFs[3].Netdev == veths[3].Name && p.VFs[3].Driver == "igbvf"
	})
	_, err = fakesys.SetVFs(root, pf.PCI, fakesys.IntelIGB, nil)
	must(t, err)
	for _, v := range veths {
		must(t, h.LinkDel(v))
	}
	waitFor(t, published, "pf2 without VFs", func(s *Snapshot) bool {
		p, _ := s.Machine.PFByPCI(pf.PCI)
		return p.NumVFs == 0 && len(p.VFs) == 0
	})
	if st := inv.Stats(); st.FullRescans != 1 || st.PFReads == 0 {
		t.Errorf("stats %+v: want the start's rescan only, and PF reads", st)
	}
}
