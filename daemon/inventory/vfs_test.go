package inventory

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

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

// TestVFFilter: which events ask for which PF.
func TestVFFilter(t *testing.T) {
	root := filepath.Join(t.TempDir(), "root")
	spec, err := fakesys.Write(root, "sriov-vm-igb", fakesys.Options{})
	if err != nil {
		t.Fatal(err)
	}
	inv, err := New(root, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	pf0 := spec.PFs[0]
	f := newEventFilter(inv.sys)
	snap := inv.Current()
	for _, tt := range []struct {
		name string
		ev   LinkEvent
		pfs  []string
	}{
		{"a VF's netdev appears", LinkEvent{Name: pf0.VFs[0].Netdev, Index: 10}, []string{pf0.PCI}},
		{"the same event again", LinkEvent{Name: pf0.VFs[0].Netdev, Index: 10}, nil},
		{"it changes state", LinkEvent{Name: pf0.VFs[0].Netdev, Index: 10, State: LinkState{Flags: 1}}, []string{pf0.PCI}},
		{"it is renamed", LinkEvent{Name: "net1", Index: 10, State: LinkState{Flags: 1}}, []string{pf0.PCI}},
		{"it goes (into a pod)", LinkEvent{Name: "net1", Index: 10, Gone: true}, []string{pf0.PCI}},
		{"a PF's own netdev", LinkEvent{Name: pf0.Netdev, Index: 2}, nil},
		{"a veth", LinkEvent{Name: "veth1", Index: 30}, nil},
		{"an unknown link goes", LinkEvent{Name: "veth1", Index: 30, Gone: true}, nil},
		{"another PF's VF", LinkEvent{Name: spec.PFs[2].VFs[1].Netdev, Index: 40}, []string{spec.PFs[2].PCI}},
	} {
		c := f.classify(snap, tt.ev)
		if len(c.pfs) != len(tt.pfs) || (len(c.pfs) > 0 && c.pfs[0] != tt.pfs[0]) {
			t.Errorf("%s: pfs %v, want %v", tt.name, c.pfs, tt.pfs)
		}
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
