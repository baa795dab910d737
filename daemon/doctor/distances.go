package doctor

import (
	"fmt"

	"github.com/railcni/rail/pkg/topology"
)

// distanceChecks says where the GPU/NIC distances come from when it is
// not sysfs's PCIe tree alone: the NCCL topology file (and where sysfs
// disagrees), CPU sockets for C2C-attached GPUs. A node whose sysfs hides
// the tree without a file is already a problem line.
func distanceChecks(m *topology.Machine) []check {
	r := m.Report()
	counts := map[topology.Source]int{}
	for _, row := range r.Sources {
		for _, s := range row {
			counts[s]++
		}
	}
	var out []check
	if r.TopologyFile != "" {
		out = append(out, check{level: "ok", what: fmt.Sprintf("NCCL topology file %s gives %d GPU/NIC distance(s); sysfs disagrees on %d (the file wins)",
			r.TopologyFile, counts[topology.SourceFile], len(r.Disagreements))})
	}
	if n := counts[topology.SourceSocket]; n > 0 {
		out = append(out, check{level: "ok", what: fmt.Sprintf("GPUs on chip-to-chip links (Grace): %d GPU/NIC distance(s) by CPU socket (P2C on the GPU's socket, SYS across)", n)})
	}
	return out
}
