package doctor

import (
	"strings"
	"testing"

	"github.com/railcni/rail/pkg/topology"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

// TestDoctorNamesTheNodesNICs: doctor says which NICs are the node's own
// and why, from raild's report when it answers, else from sysfs for a
// root that is not this host.
func TestDoctorNamesTheNodesNICs(t *testing.T) {
	root := t.TempDir()
	if _, err := fakesys.Write(root, "frontend-lag", fakesys.Options{}); err != nil {
		t.Fatal(err)
	}
	m, err := topology.Discover(root)
	if err != nil {
		t.Fatal(err)
	}
	live := m.ReportWith(map[string]topology.Protection{
		"mlx5_2": {Reasons: []topology.ProtectReason{{Kind: topology.ProtectNodeIP, Detail: "10.99.0.2/24"}}},
		"mlx5_4": {Reasons: []topology.ProtectReason{{Kind: topology.ProtectRoute, Detail: "10.50.0.0/16 dev ibp160s0"}}, Shared: true},
	})
	tests := []struct {
		name string
		live *topology.Report
		want []string
	}{
		{name: "from raild", live: &live, want: []string{
			"ok mlx5_2 is the node's own (protected, never placed): carries the node's InternalIP 10.99.0.2/24",
			"ok mlx5_4 is the node's own (protected, shared in macvlan/ipoib (allowProtectedNICs), never moved): carries the host route 10.50.0.0/16 dev ibp160s0",
		}},
		{name: "from sysfs", want: []string{
			"ok mlx5_bond_0 is the node's own (protected, RoCE LAG: macvlan on the bond only, never moved): is a bond master over ens6f0np0, ens6f1np1",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			protected, problems := nodeNICs(tc.live, m, root)
			var lines []string
			for _, c := range append(problems, protectedChecks(protected)...) {
				lines = append(lines, c.level+" "+c.what)
			}
			if strings.Join(lines, "\n") != strings.Join(tc.want, "\n") {
				t.Fatalf("checks\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}
