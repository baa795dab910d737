package doctor

import (
	"strings"
	"testing"

	"github.com/railcni/rail/pkg/topology"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

// dualPortMachine writes dualport-2s with port 2 of mlx4_0 DOWN.
func dualPortMachine(t *testing.T) (*topology.Machine, string) {
	t.Helper()
	root := t.TempDir()
	if _, err := fakesys.Write(root, "dualport-2s", fakesys.Options{}); err != nil {
		t.Fatal(err)
	}
	if err := fakesys.SetPortState(root, "mlx4_0", 2, "DOWN"); err != nil {
		t.Fatal(err)
	}
	m, err := topology.Discover(root)
	if err != nil {
		t.Fatal(err)
	}
	return m, root
}

// TestDoctorDualPort: doctor checks every port of a dual-port HCA on its
// own line and its shared uverbs node once.
func TestDoctorDualPort(t *testing.T) {
	m, root := dualPortMachine(t)
	var lines []string
	for _, c := range topologyChecks(m, root, 0) {
		lines = append(lines, c.level+" "+c.what)
	}
	tests := []struct {
		line  string
		count int
	}{
		{"ok mlx4_0 (ibp26s0, InfiniBand) port 1 ACTIVE", 1},
		{"warn mlx4_0:2 (ibp26s0d1, InfiniBand) port 2 DOWN", 1},
		{"ok mlx4_1:2 (ens2d1, Ethernet) port 2 ACTIVE", 1},
		{"ok mlx5_0 (ibp155s0, InfiniBand) port 1 ACTIVE", 1},
		{"warn mlx4_0 device node /dev/infiniband/uverbs0", 1},
		{"warn mlx4_0: port 2 DOWN (LinkUp)", 1},
		{"ok 3 RDMA device(s) in /sys/class/infiniband, 5 ports (each a NIC of its own)", 1},
	}
	for _, tc := range tests {
		if n := countLines(lines, tc.line); n != tc.count {
			t.Errorf("%q appears %d times, want %d:\n%s", tc.line, n, tc.count, strings.Join(lines, "\n"))
		}
	}
}

func countLines(lines []string, want string) int {
	n := 0
	for _, l := range lines {
		if l == want {
			n++
		}
	}
	return n
}
