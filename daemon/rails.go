package main

import (
	"fmt"

	"github.com/railcni/rail/daemon/config"
	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/topology"
)

type apiPoolStatus = api.PoolStatus

// railIndex numbers the NICs: by the config's map (name or PCI address), or
// in the order of the node's affinity (GPU 0's NIC is rail 0, ...).
func railIndex(cfg *config.Config, m *topology.Machine) (map[string]int, error) {
	rails := map[string]int{}
	for id, rail := range cfg.Rails.NICs {
		nic, ok := m.NICByName(id)
		if !ok {
			return nil, fmt.Errorf("config rails.nics: %q is not an RDMA device on this node", id)
		}
		rails[nic.Name] = rail
	}
	if !cfg.UseAffinityRails() {
		return rails, nil
	}
	next := 0
	affinity := m.Affinity()
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
