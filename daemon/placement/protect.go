package placement

import (
	"fmt"
	"maps"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/topology"
)

// Guard tells placement which NICs are the node's own (the inventory,
// which reads them with netlink in the host netns).
type Guard interface {
	// Protected is the protection of every protected NIC as last read
	// (the inventory's snapshot).
	Protected() map[string]topology.Protection
	// Recheck reads the protection of these NICs again, now: an address
	// or route may have come since the last read.
	Recheck(nics []topology.NIC) (map[string]topology.Protection, error)
}

// maxRechecks bounds how often one placement starts again because a NIC
// it chose turned out to be the node's own.
const maxRechecks = 3

// protection is the node's own NICs as last read: the guard's, else what
// sysfs shows of the machine's NICs.
func (n *Node) protection() map[string]topology.Protection {
	if n.Guard != nil {
		return n.Guard.Protected()
	}
	return n.Machine.LinkProtection()
}

// excludeProtected adds to exclude every NIC its protection refuses to
// mode (a NIC already excluded keeps its reason).
func excludeProtected(exclude map[string]string, protected map[string]topology.Protection, mode api.Mode) {
	for name, p := range protected {
		if _, already := exclude[name]; already {
			continue
		}
		if why := p.Refusal(mode.Exclusive()); why != "" {
			exclude[name] = why
		}
	}
}

// recheck reads the picks' protection again; it returns the protection
// with what changed and whether a pick is now refused.
func (n *Node) recheck(picks []Pick, protected map[string]topology.Protection, mode api.Mode) (map[string]topology.Protection, bool, error) {
	if n.Guard == nil || len(picks) == 0 {
		return protected, false, nil
	}
	nics := make([]topology.NIC, len(picks))
	for i, p := range picks {
		nics[i] = p.NIC
	}
	fresh, err := n.Guard.Recheck(nics)
	if err != nil {
		return nil, false, fmt.Errorf("check that the chosen NICs are not the node's own: %w", err)
	}
	refused := false
	for _, nic := range nics {
		p, ok := fresh[nic.Name]
		if !ok || p.Refusal(mode.Exclusive()) == "" {
			continue
		}
		if !refused {
			protected = maps.Clone(protected)
			refused = true
		}
		protected[nic.Name] = p
	}
	return protected, refused, nil
}
