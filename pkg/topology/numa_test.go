package topology_test

import (
	"os"
	"strings"
	"testing"

	"github.com/railcni/rail/pkg/topology"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

// TestNUMAUnknownOnOneNode: a device whose numa_node is -1 sits on node 0
// when the machine has one NUMA node (a cloud GPU VM): no problem, NUMA
// and CPU node 0. With several nodes, or no node directory to tell, -1
// stays unknown and a problem.
func TestNUMAUnknownOnOneNode(t *testing.T) {
	tests := []struct {
		name    string
		damage  func(t *testing.T, root string)
		numa    int
		problem bool
	}{
		{name: "one node", numa: 0},
		{name: "two nodes", numa: -1, problem: true, damage: func(t *testing.T, root string) {
			if err := os.Mkdir(hostPath(t, root, "/sys/devices/system/node")+"/node1", 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(hostPath(t, root, "/sys/devices/system/node")+"/node1/cpulist", []byte("44-87\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "no node directory", numa: -1, problem: true, damage: func(t *testing.T, root string) {
			if err := os.RemoveAll(hostPath(t, root, "/sys/devices/system/node")); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root, _ := writeMachine(t, "h200-vm", fakesys.Options{})
			if tt.damage != nil {
				tt.damage(t, root)
			}
			m := discover(t, root)
			if len(m.GPUs) != 1 || len(m.NICs) != 1 {
				t.Fatalf("%d GPUs, %d NICs; want 1 and 1", len(m.GPUs), len(m.NICs))
			}
			if m.GPUs[0].NUMA != tt.numa || m.NICs[0].NUMA != tt.numa {
				t.Errorf("GPU NUMA %d, NIC NUMA %d; want %d", m.GPUs[0].NUMA, m.NICs[0].NUMA, tt.numa)
			}
			var numaProblems []string
			for _, p := range m.Problems {
				if strings.Contains(p.Reason, "numa_node") {
					numaProblems = append(numaProblems, p.Device+": "+p.Reason)
				}
			}
			if (len(numaProblems) > 0) != tt.problem || tt.problem && len(numaProblems) != 2 {
				t.Errorf("problems %v; want a numa_node problem per device: %v", m.Problems, tt.problem)
			}
			if !tt.problem && len(m.Problems) > 0 {
				t.Errorf("problems %v on a one-node VM; want none", m.Problems)
			}
			var text strings.Builder
			if err := topology.WriteText(&text, m.Report()); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(text.String(), "Problems:") != tt.problem {
				t.Errorf("raild topo's text:\n%s\nwant Problems listed: %v", text.String(), tt.problem)
			}
			if c := m.Distance(m.GPUs[0], m.NICs[0]); c != topology.PHB {
				t.Errorf("GPU-NIC %s; want PHB (one host bridge)", c)
			}
		})
	}
}
