package nodenics_test

import (
	"net"
	"slices"
	"strings"
	"testing"

	"github.com/vishvananda/netlink"

	"github.com/railcni/rail/daemon/nodenics"
	"github.com/railcni/rail/daemon/nodenics/nodenicstest"
	"github.com/railcni/rail/pkg/topology"
)

// TestFilteredReadSeesWhatTheWholeDumpSees: the ADD-time read asks the
// kernel for one netdev's addresses and routes; it must find every kind
// of them the whole-netns read finds — a multipath route with one path
// by the NIC, a route in another table, IPv6 and peer addresses — and
// nothing of the pods' veths beside it.
func TestFilteredReadSeesWhatTheWholeDumpSees(t *testing.T) {
	m, r := frontendLagWith(t,
		nodenicstest.StandIn{Name: "fe0"},
		nodenicstest.StandIn{Name: "rail0", Addrs: []string{"10.60.0.1/24"}},
		nodenicstest.StandIn{Name: "rail1"},
		nodenicstest.StandIn{Name: "veth0", Addrs: []string{"10.98.0.1/32"}, Routes: []nodenicstest.Route{{Dst: "10.97.0.1/32"}}},
	)
	h, err := netlink.NewHandleAt(r.NS)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	link := func(name string) netlink.Link {
		l, err := h.LinkByName(name)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	fe0, rail0, rail1 := link("fe0"), link("rail0"), link("rail1")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	// fe0: a global IPv6 address and a link-local one, an IPv4 address
	// with a peer.
	must(h.AddrAdd(fe0, &netlink.Addr{IPNet: mustCIDR(t, "fd00:99::2/64")}))
	must(h.AddrAdd(fe0, &netlink.Addr{IPNet: mustCIDR(t, "10.99.0.2/32"), Peer: mustCIDR(t, "10.99.0.1/32")}))
	// rail1: one path of a multipath route whose other path is rail0's
	// subnet, and a route in table 100.
	must(h.RouteAdd(&netlink.Route{Dst: mustCIDR(t, "10.70.0.0/16"), MultiPath: []*netlink.NexthopInfo{
		{LinkIndex: rail0.Attrs().Index, Gw: net.ParseIP("10.60.0.254")},
		{LinkIndex: rail1.Attrs().Index},
	}}))
	must(h.RouteAdd(&netlink.Route{Dst: mustCIDR(t, "10.71.0.0/16"), LinkIndex: rail1.Attrs().Index, Table: 100}))

	want := []string{
		"mlx5_0 host-address: 10.60.0.1/24, host-route: 10.60.0.0/24 dev rail0, host-route: 10.70.0.0/16",
		"mlx5_1 host-route: 10.70.0.0/16, host-route: 10.71.0.0/16 dev rail1 table 100",
		"mlx5_2 host-address: 10.99.0.2/32, host-address: fd00:99::2/64, host-route: 10.99.0.1/32 dev fe0, host-route: fd00:99::/64 dev fe0",
	}
	for _, tc := range []struct {
		name   string
		reader nodenics.Reader
	}{
		{"filtered by the kernel", r},
		{"whole netns", nodenics.WholeDump(r)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, name := range []string{"mlx5_0", "mlx5_1", "mlx5_2"} {
				nic, _ := m.NICByName(name)
				p, err := tc.reader.Of([]topology.NIC{nic})
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, sortedReasons(lines(p))...)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("protected =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

// sortedReasons sorts each line's reasons, so the order of the kernel's
// answer (one dump or one per family) does not matter.
func sortedReasons(ls []string) []string {
	out := make([]string, 0, len(ls))
	for _, l := range ls {
		name, reasons, _ := strings.Cut(l, " ")
		parts := strings.Split(reasons, ", ")
		slices.Sort(parts)
		out = append(out, name+" "+strings.Join(parts, ", "))
	}
	return out
}

func mustCIDR(t *testing.T, s string) *net.IPNet {
	t.Helper()
	ip, n, err := net.ParseCIDR(s)
	if err != nil {
		t.Fatal(err)
	}
	n.IP = ip
	return n
}
