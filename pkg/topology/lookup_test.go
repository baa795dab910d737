package topology_test

import (
	"strings"
	"testing"

	"github.com/railcni/rail/pkg/topology/fakesys"
)

func TestGPUByID(t *testing.T) {
	root, spec := writeMachine(t, "h100x8-cx7x4", fakesys.Options{})
	m := discover(t, root)
	uuid3 := spec.GPUs[3].UUID
	tests := []struct {
		id    string
		index int // -1: not found
	}{
		{"3", 3},
		{" 0 ", 0},
		{"8", -1},
		{"-1", -1},
		{uuid3, 3},
		{strings.ToUpper(uuid3[:4]) + strings.ToUpper(uuid3[4:]), 3},
		{strings.ToLower(uuid3), 3},
		{"MIG-" + uuid3 + "/7/0", 3},
		{"MIG-" + spec.GPUs[5].UUID + "/1/2", 5},
		{"mig-" + strings.ToLower(spec.GPUs[5].UUID) + "/1/2", 5},
		{"MIG-3d0d4d1c-aaaa-bbbb-cccc-111111111111", -1},
		{"GPU-00000000-0000-0000-0000-000000000000", -1},
		{spec.GPUs[6].PCI, 6},
		{"9f:00.0", 6},
		{"", -1},
		{"nvidia0", -1},
	}
	for _, tc := range tests {
		g, ok := m.GPUByID(tc.id)
		switch {
		case tc.index < 0 && ok:
			t.Errorf("GPUByID(%q) found GPU%d, want none", tc.id, g.Index)
		case tc.index >= 0 && (!ok || g.Index != tc.index):
			t.Errorf("GPUByID(%q) = GPU%d %v, want GPU%d", tc.id, g.Index, ok, tc.index)
		}
	}
}

func TestNICByName(t *testing.T) {
	root, _ := writeMachine(t, "gpu8-nic8", fakesys.Options{})
	m := discover(t, root)
	tests := []struct{ key, want string }{
		{"mlx5_0", "mlx5_0"},
		{"mlx5_bond_0", "mlx5_bond_0"},
		{"0000:19:00.0", "mlx5_0"},
		{"19:00.0", "mlx5_0"},
		{"0000:C1:00.0", "mlx5_bond_0"},
		{"mlx5_11", ""},
		{"0000:18:00.0", ""}, // a GPU
		{"", ""},
	}
	for _, tc := range tests {
		n, ok := m.NICByName(tc.key)
		if ok != (tc.want != "") || n.Name != tc.want {
			t.Errorf("NICByName(%q) = %q %v, want %q", tc.key, n.Name, ok, tc.want)
		}
	}
}
