package doctor

import (
	"strings"
	"testing"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/topology"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

// TestDoctorSRIOV: doctor warns about a PF without VFs that a pool
// selects (by NIC name, PCI address or netdev), not about one no pool
// selects, and counts each PF's VFs free, held and not attachable.
func TestDoctorSRIOV(t *testing.T) {
	root := t.TempDir()
	spec, err := fakesys.Write(root, "h100x8-cx7x8-sriov", fakesys.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := topology.Discover(root)
	if err != nil {
		t.Fatal(err)
	}
	pf0, pf6, pf7 := spec.PFs[0], spec.PFs[6], spec.PFs[7]
	holders := map[string]string{pf0.VFs[0].PCI: "ns/a"}
	okLines := []string{
		"ok SR-IOV PF " + pf0.PCI + " (mlx5_0): 4 of 4 VFs enabled, 3 free, 1 held by pods",
		"ok SR-IOV PF " + pf6.PCI + " (mlx5_6): 4 of 4 VFs enabled, 3 free, 0 held by pods, 1 not attachable",
	}
	tests := []struct {
		name  string
		pools []api.PoolStatus
		want  string // pf7's line
	}{
		{"no pool selects it", []api.PoolStatus{{Name: "rail", Bound: []string{"mlx5_0"}}},
			"ok SR-IOV PF " + pf7.PCI + " (mlx5_7) has no VFs (sriov_numvfs 0 of 4); no pool selects it"},
		{"raild down: no pools", nil, "ok SR-IOV PF " + pf7.PCI + " (mlx5_7) has no VFs"},
		{"bound by name", []api.PoolStatus{{Name: "vfs", Bound: []string{"mlx5_7"}}, {Name: "other", Bound: []string{"mlx5_1"}}},
			"warn SR-IOV PF " + pf7.PCI + " (mlx5_7) has no VFs (sriov_numvfs 0 of 4) but pool(s) vfs select it"},
		{"bound by PCI and netdev", []api.PoolStatus{{Name: "b", Bound: []string{pf7.PCI}}, {Name: "a", Bound: []string{pf7.Netdev}}},
			"warn SR-IOV PF " + pf7.PCI + " (mlx5_7) has no VFs (sriov_numvfs 0 of 4) but pool(s) a, b select it"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var lines []string
			for _, c := range sriovChecks(m, tt.pools, holders) {
				lines = append(lines, c.level+" "+c.what)
			}
			text := strings.Join(lines, "\n")
			for _, want := range append(okLines, tt.want) {
				if !strings.Contains(text, want) {
					t.Errorf("doctor lacks %q:\n%s", want, text)
				}
			}
			if len(lines) != 8 {
				t.Errorf("%d lines, want one per PF:\n%s", len(lines), text)
			}
		})
	}
}

func TestLeakedVFChecks(t *testing.T) {
	got := leakedVFChecks([]topology.LeakedVF{{PCI: "0000:01:10.2", PF: "pf0", Index: 1, MAC: "0e:72:01:02:03:04",
		Why: "admin MAC 0e:72:01:02:03:04 is one rail gives a lease, but no lease holds the VF"}})
	if len(got) != 1 || got[0].level != "warn" || !strings.Contains(got[0].what, "VF 1 of pf0 (0000:01:10.2) leaked: admin MAC 0e:72:01:02:03:04") ||
		!strings.Contains(got[0].fix, "ip link set pf0 vf 1 mac 00:00:00:00:00:00") || !strings.Contains(got[0].fix, "sriov.ownPFs") {
		t.Fatalf("checks %+v", got)
	}
	if got := leakedVFChecks(nil); len(got) != 0 {
		t.Fatalf("no leak, checks %+v", got)
	}
}
