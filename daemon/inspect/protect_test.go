package inspect

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/railcni/rail/daemon/nodenics"
	"github.com/railcni/rail/daemon/nodenics/nodenicstest"
	"github.com/railcni/rail/pkg/topology"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

// TestTopoShowsTheNodesNICs checks `raild topo`'s text and JSON on the
// two machines of a mixed lab, the host's networking played by stand-ins
// in a netns of their own: which NICs are the node's own and why, and
// which NIC each GPU gets. Expected by hand: on frontend-lag every GPU
// has a rail NIC under its own switch (PIX), the front-end NIC carries
// the address and default route, the LAG is a bond; on the V100 node
// the one cabled port serves all four GPUs (PIX on its socket, SYS on
// the other) and nothing is the node's own.
func TestTopoShowsTheNodesNICs(t *testing.T) {
	cases := []struct {
		machine   string
		standIns  []nodenicstest.StandIn
		protected []string // the text's "Protected" lines, spaces squeezed
		affinity  []string
		json      map[string][]topology.ProtectKind
	}{
		{machine: "frontend-lag",
			standIns: []nodenicstest.StandIn{
				{Name: "fe0", Addrs: []string{"10.99.0.2/24"}, Routes: []nodenicstest.Route{{Dst: "default", Gw: "10.99.0.1"}}},
				{Name: "ibp25s0"}, // mlx5_0, up, IPv6 link-local only: not the node's
			},
			protected: []string{
				"mlx5_2 fe0 never placed: carries the host address 10.99.0.2/24; carries the host's default route (default via 10.99.0.1 dev fe0); carries the host route 10.99.0.0/24 dev fe0",
				"mlx5_bond_0 bond0 RoCE LAG: macvlan on the bond only, never moved: is a bond master over ens6f0np0, ens6f1np1",
			},
			affinity: []string{"GPU0 -> mlx5_0 PIX", "GPU1 -> mlx5_0 PIX", "GPU2 -> mlx5_1 PIX", "GPU3 -> mlx5_1 PIX",
				"GPU4 -> mlx5_3 PIX", "GPU5 -> mlx5_3 PIX", "GPU6 -> mlx5_4 PIX", "GPU7 -> mlx5_4 PIX"},
			json: map[string][]topology.ProtectKind{
				"mlx5_2":      {topology.ProtectAddress, topology.ProtectDefaultRoute, topology.ProtectRoute},
				"mlx5_bond_0": {topology.ProtectBondMaster},
			}},
		{machine: "v100x4-cx5-dualport",
			standIns: []nodenicstest.StandIn{{Name: "ibp28s0f0"}, {Name: "ibp28s0f1"}},
			affinity: []string{"GPU0 -> mlx5_0 PIX", "GPU1 -> mlx5_0 PIX", "GPU2 -> mlx5_0 SYS", "GPU3 -> mlx5_0 SYS"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.machine, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "root")
			if _, err := fakesys.Write(root, tc.machine, fakesys.Options{Netdevs: map[string]string{"mlx5_2": "fe0"}}); err != nil {
				t.Fatal(err)
			}
			r, err := readReport(root, "", topology.Options{}, &nodenics.Reader{NS: nodenicstest.Netns(t, tc.standIns...)})
			if err != nil {
				t.Fatal(err)
			}
			var text bytes.Buffer
			if err := topology.WriteText(&text, r); err != nil {
				t.Fatal(err)
			}
			checkSection(t, text.String(), "Protected (the node's own NICs):", tc.protected)
			checkSection(t, text.String(), "Affinity:", tc.affinity)
			var buf bytes.Buffer
			if err := printJSON(&buf, r); err != nil {
				t.Fatal(err)
			}
			var got struct {
				Protected map[string]struct {
					Reasons []struct {
						Kind topology.ProtectKind `json:"kind"`
					} `json:"reasons"`
				} `json:"protected"`
			}
			if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
				t.Fatal(err)
			}
			if len(got.Protected) != len(tc.json) {
				t.Fatalf("JSON protected = %+v, want %v", got.Protected, tc.json)
			}
			for name, kinds := range tc.json {
				var have []topology.ProtectKind
				for _, r := range got.Protected[name].Reasons {
					have = append(have, r.Kind)
				}
				if !slices.Equal(have, kinds) {
					t.Errorf("JSON protected[%s] kinds = %v, want %v", name, have, kinds)
				}
			}
		})
	}
}

// checkSection compares the lines after header, up to a blank line, with
// want (spaces squeezed); no want: the section must be absent.
func checkSection(t *testing.T, text, header string, want []string) {
	t.Helper()
	_, rest, found := strings.Cut(text, header+"\n")
	if len(want) == 0 {
		if found {
			t.Errorf("text has %q, want none:\n%s", header, text)
		}
		return
	}
	if !found {
		t.Fatalf("text lacks %q:\n%s", header, text)
	}
	section, _, _ := strings.Cut(rest, "\n\n")
	var got []string
	for _, line := range strings.Split(strings.TrimRight(section, "\n"), "\n") {
		got = append(got, strings.Join(strings.Fields(line), " "))
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s\n%s\nwant\n%s", header, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
