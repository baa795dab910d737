package placement

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/railcni/rail/daemon/config"
	"github.com/railcni/rail/pkg/topology"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

// dualPortMachine is dualport-2s described with port 2 of mlx4_0 DOWN
// (its first switch's third slot), written and discovered.
func dualPortMachine(t *testing.T) *topology.Machine {
	t.Helper()
	host, _ := fakesys.Machine("dualport-2s")
	host.Roots[0].Ports[0].Switch[2].Card.Funcs[0].MorePorts[0].State = "DOWN"
	root := t.TempDir()
	if _, err := fakesys.WriteHost(root, "dualport-2s", host, fakesys.Options{}); err != nil {
		t.Fatal(err)
	}
	m, err := topology.Discover(root)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestRailIndexDualPort: each port is a rail of its own in affinity order;
// a PCI address in rails.nics numbers every port of its function.
func TestRailIndexDualPort(t *testing.T) {
	m := dualPortMachine(t)
	tests := []struct {
		name  string
		rails map[string]int
		want  string
	}{
		// mlx4_0:2 is DOWN: GPU1 shares mlx4_0 with GPU0.
		{"affinity order", nil, "mlx4_0=0 mlx4_1:2=2 mlx4_1=1 mlx5_0=3"},
		{"port 2 by name", map[string]int{"mlx4_0:2": 7}, "mlx4_0:2=7"},
		{"PCI address: both ports", map[string]int{"0000:1f:00.0": 4}, "mlx4_1:2=4 mlx4_1=4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := &config.Config{Rails: config.Rails{NICs: tt.rails}}
			got, err := RailIndex(cfg.Rails.NICs, cfg.UseAffinityRails(), m, nil)
			if err != nil {
				t.Fatal(err)
			}
			var parts []string
			for nic, r := range got {
				parts = append(parts, fmt.Sprintf("%s=%d", nic, r))
			}
			slices.Sort(parts)
			if strings.Join(parts, " ") != tt.want {
				t.Errorf("rails %v, want %s", parts, tt.want)
			}
		})
	}
}
