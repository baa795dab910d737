package placement

import (
	"fmt"

	"github.com/railcni/rail/pkg/topology"
)

// RailIndex numbers the NICs: by the config's map (a NIC name such as
// mlx5_0 or mlx4_0:2, or a PCI address, which numbers every port of the
// function), or in the order of the node's affinity (GPU 0's NIC is rail
// 0, ...), which leaves out the NICs in exclude (the node's own, which
// carry no rail; nil: none).
func RailIndex(nics map[string]int, byAffinity bool, m *topology.Machine, exclude map[string]string) (map[string]int, error) {
	rails := map[string]int{}
	for id, rail := range nics {
		nics := m.NICsByID(id)
		if len(nics) == 0 {
			return nil, fmt.Errorf("config rails.nics: %q is not an RDMA device on this node", id)
		}
		for _, nic := range nics {
			rails[nic.Name] = rail
		}
	}
	if !byAffinity {
		return rails, nil
	}
	next := 0
	affinity := m.AffinityExcluding(exclude)
	for _, g := range m.GPUs {
		nic, ok := affinity[g.Index]
		if !ok {
			continue
		}
		if _, seen := rails[nic]; !seen {
			rails[nic] = next
			next++
		}
	}
	return rails, nil
}
