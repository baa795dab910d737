package placement

import (
	"strings"
	"testing"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/topology"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

// softRoCENode reads a fake host as a softRoCE node does: its Ethernet NICs
// without an RDMA device count, by their netdevs.
func softRoCENode(t *testing.T, host fakesys.Host) *Node {
	t.Helper()
	root := t.TempDir()
	if _, err := fakesys.WriteHost(root, "softroce-node", host, fakesys.Options{}); err != nil {
		t.Fatal(err)
	}
	m, err := topology.DiscoverWith(root, topology.Options{NetdevNICs: true})
	if err != nil {
		t.Fatal(err)
	}
	return &Node{Machine: m, Limits: Limits{SoftRoCE: true}}
}

// TestChooseSoftRoCE: on a softRoCE VM without any RDMA device (no
// stand-in rxe) each GPU gets the virtio-net NIC behind its switch, by its
// netdev; a 2-GPU pod gets both NICs (netdev-only NICs share no RDMA
// device, so they are never folded into one); selectors name a NIC by its
// netdev or PCI address; the node's own NIC is never placed; move is
// refused; and vf mode places the igb PFs
// of the SR-IOV rig without their rxe, by their netdevs. Before netdev
// NICs the VM had no NIC at all.
func TestChooseSoftRoCE(t *testing.T) {
	vm, _ := fakesys.Machine("softroce-vm")
	n := softRoCENode(t, vm)
	eth2, _ := n.Machine.NICByName("eth2")
	tests := []struct {
		name    string
		in      Input
		use     func(*Usage)
		want    string
		wantErr string
	}{
		{name: "GPU 0 macvlan", in: Input{GPUs: []int{0}, Mode: api.ModeMacvlan}, want: "eth1"},
		{name: "GPU 1 ipvlan", in: Input{GPUs: []int{1}, Mode: api.ModeIPVLAN}, want: "eth2"},
		{name: "two GPUs, two NICs", in: Input{GPUs: []int{0, 1}, Mode: api.ModeMacvlan}, want: "eth1,eth2"},
		{name: "a selector naming the netdev", in: Input{GPUs: []int{0}, Mode: api.ModeMacvlan, NICs: []string{"eth2"}}, want: "eth2"},
		{name: "a selector naming the PCI address", in: Input{GPUs: []int{0}, Mode: api.ModeMacvlan, NICs: []string{eth2.PCI}}, want: "eth2"},
		{name: "shared with another pod", in: Input{GPUs: []int{0}, Mode: api.ModeMacvlan},
			use: func(u *Usage) { u.Add("eth1", "s/rail0", "s", "ns/a", api.ModeMacvlan) }, want: "eth1"},
		{name: "move is refused", in: Input{GPUs: []int{0}, Mode: api.ModeMove}, wantErr: "refused on a softRoCE node"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			use := NewUsage()
			if tt.use != nil {
				tt.use(use)
			}
			picks, err := n.Choose(tt.in, use)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range picks {
				got = append(got, p.NIC.Name)
				if !p.NIC.NetdevOnly {
					t.Errorf("pick %s is not a netdev-only NIC", p.NIC.Name)
				}
			}
			if strings.Join(got, ",") != tt.want {
				t.Fatalf("picked %v, want %s", got, tt.want)
			}
		})
	}

	// The VM's own NIC (eth0, the default route) is never placed.
	own := map[string]topology.Protection{"eth0": defaultRoute}
	n.Guard = &fakeGuard{last: own, now: own}
	if _, err := n.Choose(Input{Mode: api.ModeMacvlan, NICs: []string{"eth0"}}, NewUsage()); err == nil || !strings.Contains(err.Error(), "default route") {
		t.Errorf("macvlan on eth0, the node's own: %v, want a refusal naming its default route", err)
	}
	for range 3 {
		picks, err := n.Choose(Input{Mode: api.ModeIPVLAN}, NewUsage())
		if err != nil || len(picks) != 1 || picks[0].NIC.Name == "eth0" {
			t.Errorf("a pod without GPUs: %+v, %v; want a NIC other than eth0", picks, err)
		}
	}

	rig, _ := fakesys.Machine("sriov-vm-igb")
	rig.SoftRoCE = nil // no rxe on the PFs
	vfs := softRoCENode(t, rig)
	picks, err := vfs.ChooseVFs(Input{GPUs: []int{0, 1}, Mode: api.ModeVF}, NewUsage())
	if err != nil {
		t.Fatal(err)
	}
	if len(picks) != 2 || picks[0].PF.Name != "pf1" || !picks[0].PF.NetdevOnly || picks[0].VF.Driver != "igbvf" || picks[0].VF.PF != picks[0].PF.PCI {
		t.Fatalf("vf picks %+v, want a VF of pf1 (by its netdev) for GPU 0", picks)
	}
}
