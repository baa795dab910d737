package topology_test

import (
	"strings"
	"testing"

	"github.com/railcni/rail/pkg/topology"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

// writeSoftRoCEVM writes the softroce-vm machine (virtio-net NICs without
// any RDMA device), with more rxe made in the host's netns on its netdevs
// (stand-ins), and returns its root.
func writeSoftRoCEVM(t *testing.T, standIns ...fakesys.SoftRoCE) string {
	t.Helper()
	host, ok := fakesys.Machine("softroce-vm")
	if !ok {
		t.Fatal("no softroce-vm machine")
	}
	host.SoftRoCE = append(host.SoftRoCE, standIns...)
	root := t.TempDir()
	if _, err := fakesys.WriteHost(root, "softroce-vm", host, fakesys.Options{}); err != nil {
		t.Fatal(err)
	}
	return root
}

func nicNames(nics []topology.NIC) string {
	names := make([]string, len(nics))
	for i, n := range nics {
		names[i] = n.Name
	}
	return strings.Join(names, ",")
}

// TestNetdevNICs: with Options.NetdevNICs (a softRoCE node) the Ethernet
// PCI functions without an RDMA device are NICs, named by their netdevs
// and placed where their functions sit (virtio-net's netdev hangs below a
// virtio<N> device of its function); virtual netdevs, VFs, functions with
// an RDMA device and netdevs an rxe of the host sits on are not. Without
// the option such a machine has no NIC at all, so placement found none
// (the fabric rig's VMs needed a stand-in rxe on each NIC).
func TestNetdevNICs(t *testing.T) {
	igb := t.TempDir()
	if _, err := fakesys.Write(igb, "sriov-vm-igb", fakesys.Options{}); err != nil {
		t.Fatal(err)
	}
	h100 := t.TempDir()
	if _, err := fakesys.Write(h100, "h100x8-cx7x4", fakesys.Options{}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		root       string
		netdevNICs bool
		want       string // NIC names
		netdevOnly string // those of them that are netdev-only
		standIns   string // SoftRDMANICs
	}{
		{name: "a softRoCE VM", root: writeSoftRoCEVM(t), netdevNICs: true, want: "eth0,eth1,eth2", netdevOnly: "eth0,eth1,eth2"},
		{name: "the same VM, NICs by RDMA device only", root: writeSoftRoCEVM(t), want: ""},
		{name: "a stand-in rxe on eth1", root: writeSoftRoCEVM(t, fakesys.SoftRoCE{RDMA: "rxe_r0", Netdev: "eth1"}), netdevNICs: true,
			want: "eth0,eth2,rxe_r0", netdevOnly: "eth0,eth2", standIns: "rxe_r0"},
		{name: "an rxe on a veth", root: writeSoftRoCEVM(t, fakesys.SoftRoCE{RDMA: "rxe9", Netdev: "veth9"}), netdevNICs: true,
			want: "eth0,eth1,eth2,rxe9", netdevOnly: "eth0,eth1,eth2", standIns: "rxe9"},
		{name: "igb PFs: those without an rxe, never their VFs", root: igb, netdevNICs: true,
			want: "pf2,rxe0,rxe1", netdevOnly: "pf2", standIns: "rxe0,rxe1"},
		{name: "ConnectX NICs are placed by their RDMA devices", root: h100, netdevNICs: true,
			want: "mlx5_0,mlx5_1,mlx5_2,mlx5_3"},
		{name: "the same VM read by RDMA devices: stand-ins and all", root: writeSoftRoCEVM(t, fakesys.SoftRoCE{RDMA: "rxe_r0", Netdev: "eth1"}),
			want: "rxe_r0", standIns: "rxe_r0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := topology.DiscoverWith(tt.root, topology.Options{NetdevNICs: tt.netdevNICs})
			if err != nil {
				t.Fatal(err)
			}
			if got := nicNames(m.NICs); got != tt.want {
				t.Errorf("NICs = %s, want %s", got, tt.want)
			}
			var only []topology.NIC
			for _, n := range m.NICs {
				if n.NetdevOnly {
					only = append(only, n)
				}
			}
			if got := nicNames(only); got != tt.netdevOnly {
				t.Errorf("netdev-only NICs = %s, want %s", got, tt.netdevOnly)
			}
			if got := nicNames(m.SoftRDMANICs()); got != tt.standIns {
				t.Errorf("SoftRDMANICs = %s, want %s", got, tt.standIns)
			}
			for _, n := range only {
				if n.Netdev != n.Name || n.PCI == "" || n.Root == "" || n.LinkLayer != topology.Ethernet || n.State != topology.PortActive ||
					n.RDMADevice() != "" || n.PortNum() != 0 || n.Uverbs != nil || n.Virtual {
					t.Errorf("netdev-only NIC %+v", n)
				}
			}
		})
	}
}

// TestNetdevNICPlace: each GPU of the softRoCE VM gets the virtio-net NIC
// behind its switch (PIX, by the function's place, not the virtio
// device's), and a NIC whose netdev is down is never chosen.
func TestNetdevNICPlace(t *testing.T) {
	root := writeSoftRoCEVM(t)
	m, err := topology.DiscoverWith(root, topology.Options{NetdevNICs: true})
	if err != nil {
		t.Fatal(err)
	}
	for gpu, want := range map[int]string{0: "eth1", 1: "eth2"} {
		choices, err := m.Select(topology.Request{GPUs: []int{gpu}, LinkLayer: topology.Ethernet})
		if err != nil {
			t.Fatal(err)
		}
		if len(choices) != 1 || choices[0].NIC != want || choices[0].Class != topology.PIX {
			t.Errorf("GPU %d: %+v, want %s PIX", gpu, choices, want)
		}
	}
	bare, err := topology.Discover(root)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bare.Select(topology.Request{GPUs: []int{0}, LinkLayer: topology.Ethernet}); err == nil {
		t.Error("without netdev NICs the VM has a NIC to select")
	}
	if err := fakesys.SetNetdevState(root, "eth1", false); err != nil {
		t.Fatal(err)
	}
	m, err = topology.DiscoverWith(root, topology.Options{NetdevNICs: true})
	if err != nil {
		t.Fatal(err)
	}
	eth1, _ := m.NICByName("eth1")
	if eth1.State != "DOWN" {
		t.Errorf("eth1 down: State %q", eth1.State)
	}
	choices, err := m.Select(topology.Request{GPUs: []int{0}, LinkLayer: topology.Ethernet})
	if err != nil {
		t.Fatal(err)
	}
	if choices[0].NIC == "eth1" {
		t.Errorf("GPU 0 got eth1, whose netdev is down")
	}
}

// TestNetdevNICLookups: a Sysfs where netdev-only NICs count reads one
// again by its netdev (DiscoverDevice, as the inventory does on a link
// event), names it as its own device for a new link (NetdevRDMADevices),
// and reads its state now (PortReader.NetdevState); a Sysfs where they do
// not count reads none.
func TestNetdevNICLookups(t *testing.T) {
	root := writeSoftRoCEVM(t)
	plain, err := topology.OpenSysfs(root)
	if err != nil {
		t.Fatal(err)
	}
	sys := plain.WithNetdevNICs(true)
	tests := []struct {
		name    string
		sys     *topology.Sysfs
		netdev  string
		want    string // DiscoverDevice's NICs
		devices string // NetdevRDMADevices
	}{
		{name: "eth1", sys: sys, netdev: "eth1", want: "eth1", devices: "eth1"},
		{name: "eth1, not counted", sys: plain, netdev: "eth1", want: "", devices: ""},
		{name: "gone", sys: sys, netdev: "eth7", want: "", devices: ""},
		{name: "a path", sys: sys, netdev: "../eth1", want: "", devices: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nics, _ := tt.sys.DiscoverDevice(tt.netdev)
			if got := nicNames(nics); got != tt.want {
				t.Errorf("DiscoverDevice = %s, want %s", got, tt.want)
			}
			devices, _ := tt.sys.NetdevRDMADevices(tt.netdev)
			if got := strings.Join(devices, ","); got != tt.devices {
				t.Errorf("NetdevRDMADevices = %s, want %s", got, tt.devices)
			}
		})
	}
	for _, state := range []struct {
		up   bool
		want string
	}{{true, "ACTIVE"}, {false, "DOWN"}, {true, "ACTIVE"}} {
		if err := fakesys.SetNetdevState(root, "eth2", state.up); err != nil {
			t.Fatal(err)
		}
		if nics, _ := sys.DiscoverDevice("eth2"); len(nics) != 1 || nics[0].State != state.want {
			t.Errorf("eth2 up %v: read again %+v, want state %s", state.up, nics, state.want)
		}
	}
}
