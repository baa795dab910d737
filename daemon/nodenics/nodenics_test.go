package nodenics_test

import (
	"net/netip"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/railcni/rail/daemon/nodenics"
	"github.com/railcni/rail/daemon/nodenics/nodenicstest"
	"github.com/railcni/rail/pkg/topology"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

// frontendLag writes the frontend-lag machine with the netdev names the
// stand-ins carry, and the stand-ins: the front-end NIC mlx5_2 with the
// node's address and default route, mlx5_0 up with nothing but IPv6
// link-local, mlx5_1 with a storage route and no address.
func frontendLag(t *testing.T) (*topology.Machine, nodenics.Reader) { return frontendLagB(t) }

func frontendLagB(t testing.TB) (*topology.Machine, nodenics.Reader) {
	t.Helper()
	return frontendLagWith(t,
		nodenicstest.StandIn{Name: "fe0", Addrs: []string{"10.99.0.2/24"},
			Routes: []nodenicstest.Route{{Dst: "default", Gw: "10.99.0.1"}}},
		nodenicstest.StandIn{Name: "rail0"},
		nodenicstest.StandIn{Name: "rail1", Routes: []nodenicstest.Route{{Dst: "10.50.0.0/16"}}},
	)
}

// frontendLagWith is the frontend-lag machine with these stand-ins in a
// netns of its own.
func frontendLagWith(t testing.TB, standIns ...nodenicstest.StandIn) (*topology.Machine, nodenics.Reader) {
	t.Helper()
	root := filepath.Join(t.TempDir(), "root")
	opt := fakesys.Options{Netdevs: map[string]string{"mlx5_0": "rail0", "mlx5_1": "rail1", "mlx5_2": "fe0"}}
	if _, err := fakesys.Write(root, "frontend-lag", opt); err != nil {
		t.Fatal(err)
	}
	m, err := topology.Discover(root)
	if err != nil {
		t.Fatal(err)
	}
	return m, nodenics.Reader{NS: nodenicstest.Netns(t, standIns...)}
}

func TestReaderFindsTheNodesNICs(t *testing.T) {
	m, r := frontendLag(t)
	cases := []struct {
		name    string
		nodeIPs []netip.Addr
		shared  map[string]bool
		want    []string
	}{
		{name: "addresses and routes", want: []string{
			"mlx5_1 host-route: 10.50.0.0/16 dev rail1",
			"mlx5_2 host-address: 10.99.0.2/24, default-route: default via 10.99.0.1 dev fe0, host-route: 10.99.0.0/24 dev fe0",
			"mlx5_bond_0 lag bond-master: ens6f0np0, ens6f1np1",
		}},
		{name: "the node's InternalIP", nodeIPs: []netip.Addr{netip.MustParseAddr("10.99.0.2")}, want: []string{
			"mlx5_1 host-route: 10.50.0.0/16 dev rail1",
			"mlx5_2 node-ip: 10.99.0.2/24, default-route: default via 10.99.0.1 dev fe0, host-route: 10.99.0.0/24 dev fe0",
			"mlx5_bond_0 lag bond-master: ens6f0np0, ens6f1np1",
		}},
		{name: "shared by the config", shared: map[string]bool{"mlx5_1": true}, want: []string{
			"mlx5_1 shared host-route: 10.50.0.0/16 dev rail1",
			"mlx5_2 host-address: 10.99.0.2/24, default-route: default via 10.99.0.1 dev fe0, host-route: 10.99.0.0/24 dev fe0",
			"mlx5_bond_0 lag bond-master: ens6f0np0, ens6f1np1",
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r.NodeIPs, r.Shared = tc.nodeIPs, tc.shared
			got, err := r.All(m)
			if err != nil {
				t.Fatal(err)
			}
			if lines := lines(got); !slices.Equal(lines, tc.want) {
				t.Fatalf("protected =\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

// TestReaderOfChosenNICs is the ADD-time check: only the NICs given are
// read, and what appeared since the machine was read counts.
func TestReaderOfChosenNICs(t *testing.T) {
	m, r := frontendLag(t)
	var chosen []topology.NIC
	for _, name := range []string{"mlx5_0", "mlx5_2", "mlx5_3"} {
		nic, _ := m.NICByName(name)
		chosen = append(chosen, nic)
	}
	got, err := r.Of(chosen)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := got["mlx5_2"]; !ok || len(got) != 1 {
		t.Fatalf("Of(mlx5_0, mlx5_2, mlx5_3) = %v, want mlx5_2 alone", got)
	}
}

// lines spells protections as "name [lag] [shared] kind: detail, ...", sorted.
func lines(p map[string]topology.Protection) []string {
	var out []string
	for name, prot := range p {
		line := name
		if prot.LAG {
			line += " lag"
		}
		if prot.Shared {
			line += " shared"
		}
		var reasons []string
		for _, r := range prot.Reasons {
			reasons = append(reasons, string(r.Kind)+": "+r.Detail)
		}
		out = append(out, line+" "+strings.Join(reasons, ", "))
	}
	slices.Sort(out)
	return out
}
