package inventory

import (
	"maps"
	"reflect"
	"slices"

	"github.com/railcni/rail/pkg/topology"
)

// Update reads the named RDMA devices again, not the rest of the node,
// merges the result with the leases as Rescan does, and publishes it only
// when something differs from the current snapshot (a device's NICs or
// problems, or what the leases' holders make of them). It returns the
// current snapshot and whether it is new.
func (inv *Inventory) Update(cause string, devices []string) (*Snapshot, bool) {
	return inv.UpdateWith(cause, devices, nil)
}

// UpdateWith is Update that also reads the named SR-IOV PFs (PCI
// addresses) again: their VFs now (see topology.Sysfs.DiscoverPF).
func (inv *Inventory) UpdateWith(cause string, devices, pfs []string) (*Snapshot, bool) {
	snap, published, _ := inv.updateWithVFs(cause, devices, pfs, nil, nil)
	return snap, published
}

// UpdateVFs reads these VFs (PCI addresses, by their PF's PCI address)
// again alone — their PF whole when it changed more — and publishes what
// changed (see UpdateWith).
func (inv *Inventory) UpdateVFs(cause string, vfs map[string][]string) (*Snapshot, bool) {
	snap, published, _ := inv.updateWithVFs(cause, nil, nil, vfs, nil)
	return snap, published
}

// updateWithVFs is UpdateWith that also reads some VFs again alone (by
// their PF's PCI address): a VF's netdev moved into a pod or back changes
// nothing else of its PF, whose other VFs (a hundred, on a big node) are
// then not read. It also takes in the moves of NICs' netdevs, and
// returns what of them the follow-up reads again (see applyMoves).
func (inv *Inventory) updateWithVFs(cause string, devices, pfs []string, vfs map[string][]string, moves map[string]netdevMove) (*Snapshot, bool, concern) {
	inv.rescanMu.Lock()
	defer inv.rescanMu.Unlock()
	found, whole := inv.readVFs(inv.found, pfs, vfs)
	found = inv.readPFs(found, whole)
	found, away, devices, later := inv.applyMoves(found, inv.away, moves, slices.Clone(devices))
	for _, device := range devices {
		inv.stats.deviceReads.Add(1)
		nics, problems := inv.sys.DiscoverDevice(device)
		if reflect.DeepEqual(nics, found.DeviceNICs(device)) && reflect.DeepEqual(problems, found.DeviceProblems(device)) {
			continue
		}
		found = found.WithDevice(device, nics, problems)
	}
	holders := inv.holders()
	prev := inv.current.Load()
	if found == inv.found && maps.Equal(stillAway(away, found), inv.away) && inv.sameView(prev, holders) {
		return prev, false, later
	}
	inv.away = away
	return inv.publishFound(cause, found, holders), true, later
}

// sameView says whether holders give the machine last read the view prev
// shows: the same NICs and the same NICs in pods. A pod taking or giving
// back a NIC whose files did not change (macvlan mode; a NIC whose netdev
// is still on the host) changes nothing readers see, and is then
// remembered so the next read does not merge again. rescanMu is held.
func (inv *Inventory) sameView(prev *Snapshot, holders map[string]string) bool {
	if maps.Equal(holders, prev.Holders) || (inv.quiet.snap == prev && maps.Equal(holders, inv.quiet.holders)) {
		return true
	}
	m, inPod := merge(inv.lastSeen(prev), inv.found, holders)
	if !maps.Equal(inPod, prev.InPod) || !reflect.DeepEqual(m.NICs, prev.Machine.NICs) {
		return false
	}
	inv.quiet.snap, inv.quiet.holders = prev, holders
	return true
}

// readPFs reads the PFs again and returns found with what changed.
// rescanMu is held.
func (inv *Inventory) readPFs(found *topology.Machine, pfs []string) *topology.Machine {
	for _, pci := range pfs {
		inv.stats.pfReads.Add(1)
		pf, problems, present := inv.sys.DiscoverPF(pci)
		old, had := found.PFByPCI(pci)
		if had == present && reflect.DeepEqual(old, pf) && reflect.DeepEqual(problems, found.DeviceProblems(pci)) {
			continue
		}
		if !present {
			pf = topology.PF{PCI: pci}
		}
		found = found.WithPF(pf, present, problems)
	}
	return found
}

// readVFs reads the VFs again alone where it can and returns found with
// what changed, and the PFs to read whole: those asked for, and those
// whose VFs cannot be read alone (topology.Sysfs.DiscoverVFs). rescanMu is
// held.
func (inv *Inventory) readVFs(found *topology.Machine, pfs []string, vfs map[string][]string) (*topology.Machine, []string) {
	whole := slices.Clone(pfs)
	for pci, list := range vfs {
		if slices.Contains(whole, pci) {
			continue
		}
		old, had := found.PFByPCI(pci)
		if !had {
			whole = append(whole, pci)
			continue
		}
		inv.stats.vfReads.Add(uint64(len(list)))
		pf, ok := inv.sys.DiscoverVFs(old, list)
		switch {
		case !ok:
			whole = append(whole, pci)
		case !reflect.DeepEqual(old, pf):
			found = found.WithPF(pf, true, found.DeviceProblems(pci))
		}
	}
	return found, whole
}
