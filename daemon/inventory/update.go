package inventory

import (
	"maps"
	"reflect"

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
	inv.rescanMu.Lock()
	defer inv.rescanMu.Unlock()
	found := inv.readPFs(inv.found, pfs)
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
	if found == inv.found && inv.sameView(prev, holders) {
		return prev, false
	}
	return inv.publishFound(cause, found, holders), true
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
