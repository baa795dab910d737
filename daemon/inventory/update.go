package inventory

import (
	"maps"
	"reflect"
)

// Update reads the named RDMA devices again, not the rest of the node,
// merges the result with the leases as Rescan does, and publishes it only
// when something differs from the current snapshot (a device's NICs or
// problems, or the leases' holders). It returns the current snapshot and
// whether it is new.
func (inv *Inventory) Update(cause string, devices []string) (*Snapshot, bool) {
	inv.rescanMu.Lock()
	defer inv.rescanMu.Unlock()
	found := inv.found
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
	if found == inv.found && maps.Equal(holders, prev.Holders) {
		return prev, false
	}
	return inv.publishFound(cause, found, holders), true
}
