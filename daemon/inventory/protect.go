package inventory

import (
	"maps"

	"github.com/railcni/rail/pkg/topology"
)

// Protector reads which NICs are the node's own (nodenics.Reader): all of
// them at each rescan, the chosen ones again at ADD time.
type Protector interface {
	All(m *topology.Machine) (map[string]topology.Protection, error)
	Of(nics []topology.NIC) (map[string]topology.Protection, error)
}

// SetProtector installs the reader of the node's own NICs and rescans, so
// the current snapshot carries their protection.
func (inv *Inventory) SetProtector(p Protector) error {
	inv.protectorMu.Lock()
	inv.protector = p
	inv.protectorMu.Unlock()
	_, err := inv.Rescan("protection on")
	return err
}

// protection reads the protection of m's NICs; without a protector it is
// what sysfs shows. A failed read keeps what the previous snapshot knew
// of the NICs still there (a protected NIC stays protected) and returns
// the error for the snapshot.
func (inv *Inventory) protection(prev *Snapshot, m *topology.Machine) (map[string]topology.Protection, error) {
	reader := inv.currentProtector()
	if reader == nil {
		return m.LinkProtection(), nil
	}
	p, err := reader.All(m)
	if err == nil {
		return p, nil
	}
	kept := m.LinkProtection()
	if prev != nil {
		for name, prot := range prev.Protected {
			if _, ok := m.NICByName(name); ok {
				if _, have := kept[name]; !have {
					kept[name] = prot
				}
			}
		}
	}
	return kept, err
}

// Protected is the current snapshot's protection of the node's own NICs
// (placement.Guard).
func (inv *Inventory) Protected() map[string]topology.Protection {
	return inv.Current().Protected
}

// Recheck reads the protection of these NICs now (placement.Guard): an
// address or route may have come on one since the last rescan.
func (inv *Inventory) Recheck(nics []topology.NIC) (map[string]topology.Protection, error) {
	p := inv.currentProtector()
	if p == nil {
		out := map[string]topology.Protection{}
		for _, n := range nics {
			if prot := n.LinkProtection(); prot.Protected() {
				out[n.Name] = prot
			}
		}
		return out, nil
	}
	fresh, err := p.Of(nics)
	if err != nil {
		return nil, err
	}
	return maps.Clone(fresh), nil
}

// currentProtector is the protector installed, read under its own lock
// only (see Inventory.protectorMu).
func (inv *Inventory) currentProtector() Protector {
	inv.protectorMu.Lock()
	defer inv.protectorMu.Unlock()
	return inv.protector
}
