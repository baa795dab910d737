package inventory

import (
	"sort"

	"github.com/railcni/rail/pkg/topology"
)

// StateChange is a NIC whose port state changed between two snapshots;
// From is "" for a NIC that appeared, To is "" for one that went away.
type StateChange struct {
	NIC, From, To string
}

// stateChanges compares the previous snapshot's NICs with m's, by name.
func stateChanges(prev *Snapshot, m *topology.Machine) []StateChange {
	if prev == nil {
		return nil
	}
	before := map[string]string{}
	for _, nic := range prev.Machine.NICs {
		before[nic.Name] = nic.State
	}
	var out []StateChange
	for _, nic := range m.NICs {
		was, known := before[nic.Name]
		delete(before, nic.Name)
		if !known || was != nic.State {
			out = append(out, StateChange{NIC: nic.Name, From: was, To: nic.State})
		}
	}
	for name, was := range before {
		out = append(out, StateChange{NIC: name, From: was})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].NIC < out[j].NIC })
	return out
}
