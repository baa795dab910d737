package topology_test

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/railcni/rail/pkg/topology"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

func TestTargetNames(t *testing.T) {
	tests := []struct {
		name   string
		device string
		port   int
		canon  string
	}{
		{"mlx5_0", "mlx5_0", 1, "mlx5_0"},
		{"mlx4_0:2", "mlx4_0", 2, "mlx4_0:2"},
		{"mlx4_0:1", "mlx4_0", 1, "mlx4_0"},
		{"mlx4_0:0", "mlx4_0:0", 1, "mlx4_0:0"},
		{"mlx4_0:x", "mlx4_0:x", 1, "mlx4_0:x"},
		{"mlx4_0:+2", "mlx4_0:+2", 1, "mlx4_0:+2"},
		{":2", ":2", 1, ":2"},
		{"0000:19:00.0", "0000:19:00.0", 1, "0000:19:00.0"},
		{"mlx5_bond_0", "mlx5_bond_0", 1, "mlx5_bond_0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dev, port := topology.ParseTarget(tc.name)
			if dev != tc.device || port != tc.port {
				t.Fatalf("ParseTarget(%q) = %q, %d; want %q, %d", tc.name, dev, port, tc.device, tc.port)
			}
			if got := topology.TargetName(dev, port); got != tc.canon {
				t.Errorf("TargetName(%q, %d) = %q, want %q", dev, port, got, tc.canon)
			}
		})
	}
}

// TestDualPortTargets: every port of a dual-port HCA is a target with its
// own netdev, state, link layer and umad; the uverbs device is shared.
func TestDualPortTargets(t *testing.T) {
	root, spec := writeMachine(t, "dualport-2s", fakesys.Options{})
	m := discover(t, root)
	tests := []struct {
		name, device     string
		port, ports      int
		netdev, ll, umad string
		issm, uverbs     string
		hca, ucx         string
	}{
		{"mlx4_0", "mlx4_0", 1, 2, "ibp26s0", "InfiniBand", "umad0", "issm0", "uverbs0", "mlx4_0:1", "mlx4_0:1"},
		{"mlx4_0:2", "mlx4_0", 2, 2, "ibp26s0d1", "InfiniBand", "umad1", "issm1", "uverbs0", "mlx4_0:2", "mlx4_0:2"},
		{"mlx4_1", "mlx4_1", 1, 2, "ens2", "Ethernet", "umad2", "", "uverbs1", "mlx4_1:1", "mlx4_1:1"},
		{"mlx4_1:2", "mlx4_1", 2, 2, "ens2d1", "Ethernet", "umad3", "", "uverbs1", "mlx4_1:2", "mlx4_1:2"},
		{"mlx5_0", "mlx5_0", 1, 0, "ibp155s0", "InfiniBand", "umad4", "issm4", "uverbs2", "mlx5_0", "mlx5_0:1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n, ok := m.NICByName(tc.name)
			if !ok {
				t.Fatalf("%s not found", tc.name)
			}
			if n.RDMADevice() != tc.device || n.PortNum() != tc.port || n.DevicePorts != tc.ports || n.Netdev != tc.netdev ||
				string(n.LinkLayer) != tc.ll || n.State != "ACTIVE" || n.UverbsName != tc.uverbs {
				t.Errorf("%s = device %s port %d of %d on %s %s %s %s", tc.name, n.RDMADevice(), n.PortNum(), n.DevicePorts,
					n.Netdev, n.LinkLayer, n.State, n.UverbsName)
			}
			if len(n.Ports) != 1 || n.Ports[0].Num != tc.port || n.Ports[0].Umad == nil || n.Ports[0].Umad.Name != tc.umad {
				t.Fatalf("%s ports %+v, want port %d with %s", tc.name, n.Ports, tc.port, tc.umad)
			}
			if issm := n.Ports[0].Issm; (issm == nil) != (tc.issm == "") || (issm != nil && issm.Name != tc.issm) {
				t.Errorf("%s issm %+v, want %q", tc.name, issm, tc.issm)
			}
			if n.HCAName() != tc.hca || n.UCXName() != tc.ucx {
				t.Errorf("%s HCA %q UCX %q, want %q %q", tc.name, n.HCAName(), n.UCXName(), tc.hca, tc.ucx)
			}
			want, _ := specTarget(spec, tc.name)
			if n.PCI != want.PCI || n.Netdev != want.Netdev {
				t.Errorf("%s pci %s netdev %s, spec %+v", tc.name, n.PCI, n.Netdev, want)
			}
		})
	}
	if len(m.Problems) != 0 {
		t.Errorf("problems %v", m.Problems)
	}
}

func specTarget(spec *fakesys.Spec, name string) (fakesys.NICSpec, bool) {
	for _, n := range spec.Targets() {
		if n.Name == name {
			return n, true
		}
	}
	return fakesys.NICSpec{}, false
}

// TestDualPortSelection: selectors name targets; a PCI address names every
// port of its function; each port's own state and link layer decide.
func TestDualPortSelection(t *testing.T) {
	tests := []struct {
		name     string
		down     []string // "device:port" set DOWN first
		gpus     []int
		nics     []string
		ll       topology.LinkLayer
		want     []string // chosen targets, in GPU order
		wantErr  string
		excluded map[string]string
	}{
		{name: "two GPUs spread over both ports", gpus: []int{0, 1}, want: []string{"mlx4_0", "mlx4_0:2"}},
		{name: "port 2 by name", gpus: []int{0}, nics: []string{"mlx4_0:2"}, want: []string{"mlx4_0:2"}},
		{name: "device name is port 1", gpus: []int{0, 1}, nics: []string{"mlx4_0"}, want: []string{"mlx4_0", "mlx4_0"}},
		{name: "explicit port 1", gpus: []int{1}, nics: []string{"mlx4_0:1"}, want: []string{"mlx4_0"}},
		{name: "port 2 by netdev", gpus: []int{0}, nics: []string{"ibp26s0d1"}, want: []string{"mlx4_0:2"}},
		{name: "PCI address names both ports", gpus: []int{0, 1}, nics: []string{"1a:00.0"}, want: []string{"mlx4_0", "mlx4_0:2"}},
		{name: "port 2 DOWN alone", down: []string{"mlx4_0:2"}, gpus: []int{0, 1}, want: []string{"mlx4_0", "mlx4_0"}},
		{name: "port 1 DOWN alone", down: []string{"mlx4_0:1"}, gpus: []int{0, 1}, want: []string{"mlx4_0:2", "mlx4_0:2"}},
		{name: "port 2 held", gpus: []int{0, 1}, excluded: map[string]string{"mlx4_0:2": "moved into pod a/b"},
			want: []string{"mlx4_0", "mlx4_0"}},
		{name: "RoCE ports for Ethernet", gpus: []int{0, 1}, ll: topology.Ethernet, want: []string{"mlx4_1", "mlx4_1:2"}},
		{name: "port 2 DOWN is named", down: []string{"mlx4_0:2"}, gpus: []int{0}, nics: []string{"mlx4_0:2"},
			wantErr: "mlx4_0:2 port DOWN"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root, _ := writeMachine(t, "dualport-2s", fakesys.Options{})
			for _, target := range tc.down {
				dev, port, _ := strings.Cut(target, ":")
				if err := fakesys.SetPortState(root, dev, int(port[0]-'0'), "DOWN"); err != nil {
					t.Fatal(err)
				}
			}
			m := discover(t, root)
			choices, err := m.Select(topology.Request{GPUs: tc.gpus, NICs: tc.nics, LinkLayer: tc.ll, Exclude: tc.excluded})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range choices {
				got = append(got, c.NIC)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("chose %v, want %v", got, tc.want)
			}
		})
	}
}

func TestNICsByID(t *testing.T) {
	root, _ := writeMachine(t, "dualport-2s", fakesys.Options{})
	m := discover(t, root)
	tests := []struct {
		id   string
		want string
	}{
		{"mlx4_0", "mlx4_0"},
		{"mlx4_0:1", "mlx4_0"},
		{"mlx4_0:2", "mlx4_0:2"},
		{"mlx4_0:3", ""},
		{"0000:1a:00.0", "mlx4_0 mlx4_0:2"},
		{"1f:00.0", "mlx4_1 mlx4_1:2"},
		{"mlx5_0", "mlx5_0"},
		{"mlx5_0:2", ""},
	}
	for _, tc := range tests {
		var names []string
		for _, n := range m.NICsByID(tc.id) {
			names = append(names, n.Name)
		}
		if got := strings.Join(names, " "); got != tc.want {
			t.Errorf("NICsByID(%q) = %q, want %q", tc.id, got, tc.want)
		}
	}
}

// TestDualPortLiveState: the port reader sees each port's state and GID
// table on its own.
func TestDualPortLiveState(t *testing.T) {
	root, _ := writeMachine(t, "dualport-2s", fakesys.Options{})
	if err := fakesys.SetPortState(root, "mlx4_1", 2, "DOWN"); err != nil {
		t.Fatal(err)
	}
	if err := fakesys.WriteGIDs(root, "mlx4_1", 2, []string{"fe80::1", "::ffff:10.2.0.5"}, []string{"IB/RoCE v1", "RoCE v2"}); err != nil {
		t.Fatal(err)
	}
	r, err := topology.NewPortReader(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		port int
		want string
	}{{1, "ACTIVE"}, {2, "DOWN"}} {
		if st, err := r.State("mlx4_1", tc.port); err != nil || st != tc.want {
			t.Errorf("mlx4_1 port %d state %q (%v), want %s", tc.port, st, err, tc.want)
		}
	}
	addr := netip.MustParseAddr("10.2.0.5")
	if i, err := r.GIDIndex("mlx4_1", 2, addr); err != nil || i != 1 {
		t.Errorf("port 2 GID index %d (%v), want 1", i, err)
	}
	if _, err := r.GIDIndex("mlx4_1", 1, addr); err == nil {
		t.Errorf("port 1 holds port 2's address")
	}
}

// TestMixedLinkLayerPorts: a VPI card with an InfiniBand port 1 and an
// Ethernet port 2 gives one target per link layer.
func TestMixedLinkLayerPorts(t *testing.T) {
	card := &fakesys.Card{Model: "ConnectX-3 Pro", Funcs: []fakesys.Func{{
		RDMA: "mlx4_0", LinkLayer: "InfiniBand", MorePorts: []fakesys.Port{{LinkLayer: "Ethernet", Netdev: "ens1d1"}},
	}}}
	root, _ := writeHost(t, fakesys.Host{Roots: []fakesys.Root{{Bus: 0x10, Ports: []fakesys.Slot{
		{Switch: []fakesys.Slot{{GPU: &fakesys.GPU{}}, {Card: card}}},
	}}}}, fakesys.Options{Netdevs: map[string]string{"mlx4_0:2": "veth-p2"}})
	m := discover(t, root)
	for _, tc := range []struct {
		ll   topology.LinkLayer
		want string
	}{{topology.InfiniBand, "mlx4_0"}, {topology.Ethernet, "mlx4_0:2"}} {
		choices, err := m.Select(topology.Request{GPUs: []int{0}, LinkLayer: tc.ll})
		if err != nil || choices[0].NIC != tc.want {
			t.Errorf("%s: chose %v (%v), want %s", tc.ll, choices, err, tc.want)
		}
	}
	if n, _ := m.NICByName("mlx4_0:2"); n.Netdev != "veth-p2" || n.Ports[0].Issm != nil {
		t.Errorf("mlx4_0:2 = netdev %q issm %+v, want veth-p2 and no issm on Ethernet", n.Netdev, n.Ports[0].Issm)
	}
}

// TestDualPortNetdevInPod: when one port's netdev leaves the host (moved
// into a pod), that port shows no netdev and its sibling keeps its own;
// before, the one netdev left on the function was given to both ports.
func TestDualPortNetdevInPod(t *testing.T) {
	tests := []struct {
		gone       string
		port1      string
		port2      string
		devIDsOnly bool // old mlx4 kernels: dev_id, no dev_port
	}{
		{gone: "ibp26s0d1", port1: "ibp26s0", port2: ""},
		{gone: "ibp26s0", port1: "", port2: "ibp26s0d1"},
		{gone: "ibp26s0d1", port1: "ibp26s0", port2: "", devIDsOnly: true},
		{gone: "ibp26s0", port1: "", port2: "ibp26s0d1", devIDsOnly: true},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%s gone, dev_id only %v", tc.gone, tc.devIDsOnly), func(t *testing.T) {
			root, _ := writeMachine(t, "dualport-2s", fakesys.Options{})
			if tc.devIDsOnly {
				for _, nd := range []string{"ibp26s0", "ibp26s0d1"} {
					mustRemove(t, hostPath(t, root, "/sys/class/net/"+nd+"/dev_port"))
				}
			}
			if err := fakesys.RemoveNetdev(root, tc.gone); err != nil {
				t.Fatal(err)
			}
			m := discover(t, root)
			for name, want := range map[string]string{"mlx4_0": tc.port1, "mlx4_0:2": tc.port2} {
				if n, ok := m.NICByName(name); !ok || n.Netdev != want {
					t.Errorf("%s netdev %q (found %v), want %q", name, n.Netdev, ok, want)
				}
			}
			if ok, why := m.Usable(nicNamed(m, "mlx4_0:2"), topology.Request{}); ok == (tc.port2 == "") {
				t.Errorf("mlx4_0:2 usable %v (%s) with netdev %q", ok, why, tc.port2)
			}
		})
	}
}

func nicNamed(m *topology.Machine, name string) topology.NIC {
	n, _ := m.NICByName(name)
	return n
}
