package topology_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/railcni/rail/pkg/topology"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

// TestSubFunctions: mlx5 sub-functions on the auxiliary bus are located at
// their parent PCI function (its PCIe place and NUMA node), not treated as
// devices without a location.
func TestSubFunctions(t *testing.T) {
	root, _ := writeMachine(t, "sf-1s", fakesys.Options{})
	if _, err := os.Lstat(filepath.Join(root, "sys/bus/auxiliary/devices/mlx5_core.sf.2")); err != nil {
		t.Fatalf("fake machine lacks the auxiliary bus entry: %v", err)
	}
	m := discover(t, root)
	if len(m.Problems) != 0 {
		t.Errorf("problems: %v", m.Problems)
	}
	tests := []struct {
		nic      string
		sf       bool
		pf       string
		class0   topology.Class // to GPU0, behind the same switch
		virtual  bool
		wantNUMA int
	}{
		{nic: "mlx5_0", class0: topology.PIX},
		{nic: "mlx5_1", sf: true, pf: "0000:19:00.0", class0: topology.PIX},
		{nic: "mlx5_2", sf: true, pf: "0000:19:00.0", class0: topology.PIX},
	}
	for _, tt := range tests {
		t.Run(tt.nic, func(t *testing.T) {
			n, ok := m.NICByName(tt.nic)
			if !ok {
				t.Fatalf("%s not discovered", tt.nic)
			}
			if n.SF != tt.sf || n.PF != tt.pf || n.Virtual != tt.virtual || n.NUMA != tt.wantNUMA || n.Netdev == "" {
				t.Errorf("%s = %+v; want sf=%v pf=%q numa=%d with a netdev", tt.nic, n, tt.sf, tt.pf, tt.wantNUMA)
			}
			if c := m.Distance(m.GPUs[0], n); c != tt.class0 {
				t.Errorf("%s to GPU0 = %s, want %s", tt.nic, c, tt.class0)
			}
		})
	}
	choices, err := m.Select(topology.Request{GPUs: []int{0}, Exclude: map[string]string{"mlx5_0": "moved into pod ns/a"}})
	if err != nil || len(choices) != 1 || choices[0].Class != topology.PIX {
		t.Fatalf("with the PF taken GPU0 got %+v, %v; want a sub-function at PIX", choices, err)
	}
}
