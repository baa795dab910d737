package topology_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/railcni/rail/pkg/topology"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

// TestLinkProtectionFromSysfs writes a node whose front-end card's two
// PFs are ports of a plain Linux bond (no RoCE LAG: each keeps its RDMA
// device), and gives a rail NIC a VLAN upper device: sysfs alone must
// show every one of them as the node's own.
func TestLinkProtectionFromSysfs(t *testing.T) {
	host := fakesys.Host{Roots: []fakesys.Root{{Bus: 0x15, NUMA: 0, Ports: []fakesys.Slot{
		{Switch: []fakesys.Slot{{GPU: &fakesys.GPU{Model: "NVIDIA H100 80GB HBM3"}},
			{Card: &fakesys.Card{Model: "ConnectX-7", Funcs: []fakesys.Func{{RDMA: "mlx5_0", LinkLayer: "Ethernet", Netdev: "rail0np0"}}}}}},
		{Card: &fakesys.Card{Model: "ConnectX-6 Dx", Master: "bond1", Funcs: []fakesys.Func{
			{RDMA: "mlx5_1", LinkLayer: "Ethernet", Netdev: "fe0"}, {RDMA: "mlx5_2", LinkLayer: "Ethernet", Netdev: "fe1"}}}},
		{Card: &fakesys.Card{Model: "ConnectX-6 Dx", Funcs: []fakesys.Func{{RDMA: "mlx5_3", LinkLayer: "Ethernet", Netdev: "vl0"}}}},
	}}}}
	root := filepath.Join(t.TempDir(), "root")
	if _, err := fakesys.WriteHost(root, "protect", host, fakesys.Options{}); err != nil {
		t.Fatal(err)
	}
	// A VLAN on mlx5_3's netdev, as the kernel links it: upper_<vlan> in
	// the lower's directory, pointing at the VLAN's own.
	vlanDir := filepath.Join(root, "sys/devices/virtual/net/vl0.100")
	if err := os.MkdirAll(vlanDir, 0o755); err != nil {
		t.Fatal(err)
	}
	lower, err := filepath.EvalSymlinks(filepath.Join(root, "sys/class/net/vl0"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(vlanDir, filepath.Join(lower, "upper_vl0.100")); err != nil {
		t.Fatal(err)
	}
	m := discover(t, root)
	got := protectedLines(m.LinkProtection())
	want := []string{
		"mlx5_1 enslaved: bond1 (bond)",
		"mlx5_2 enslaved: bond1 (bond)",
		"mlx5_3 upper: vl0.100",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("protected =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Placement without the protection would hand the bond's ports out:
	// GPU0's closest NIC is mlx5_0; with it excluded the PHB tie goes to
	// mlx5_1 by name. The report's affinity leaves them out.
	excluded := map[string]string{"mlx5_0": "taken"}
	if aff := m.AffinityExcluding(excluded); aff[0] != "mlx5_1" {
		t.Fatalf("without protection GPU0 gets %q, want mlx5_1 (the test would not show the protection)", aff[0])
	}
	for name, p := range m.LinkProtection() {
		excluded[name] = p.Refusal(false)
	}
	if aff := m.AffinityExcluding(excluded); len(aff) != 0 {
		t.Fatalf("with protection GPU0 gets %v, want nothing", aff)
	}
	r := m.Report()
	if r.Affinity["0"] != "mlx5_0" || len(r.Protected) != 3 {
		t.Fatalf("report affinity %v protected %v", r.Affinity, r.Protected)
	}
}

func TestProtectionRefusal(t *testing.T) {
	route := topology.ProtectReason{Kind: topology.ProtectDefaultRoute, Detail: "default via 10.0.0.1 dev eth0"}
	bond := topology.ProtectReason{Kind: topology.ProtectBondMaster, Detail: "a, b"}
	cases := []struct {
		name        string
		p           topology.Protection
		move, child string // "" allowed, else a piece of the refusal
	}{
		{name: "none"},
		{name: "default route", p: topology.Protection{Reasons: []topology.ProtectReason{route}},
			move: "move never takes the node's own NIC", child: "name it in allowProtectedNICs"},
		{name: "default route, shared", p: topology.Protection{Reasons: []topology.ProtectReason{route}, Shared: true},
			move: "carries the host's default route"},
		{name: "LAG", p: topology.Protection{Reasons: []topology.ProtectReason{bond}, LAG: true},
			move: "RoCE LAG"},
		{name: "LAG with the node's route", p: topology.Protection{Reasons: []topology.ProtectReason{bond, route}, LAG: true},
			move: "RoCE LAG", child: "default route"},
		{name: "plain bond master", p: topology.Protection{Reasons: []topology.ProtectReason{bond}},
			move: "bond master", child: "bond master"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, c := range []struct {
				move bool
				want string
			}{{true, tc.move}, {false, tc.child}} {
				got := tc.p.Refusal(c.move)
				if (got == "") != (c.want == "") || !strings.Contains(got, c.want) {
					t.Errorf("Refusal(move=%v) = %q, want %q", c.move, got, c.want)
				}
			}
		})
	}
}
