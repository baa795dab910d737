package ipam

import (
	"fmt"
	"time"

	"github.com/railcni/rail/ipam/store"
)

// Rebuild replaces the lease store at path with one holding exactly leases
// (rebuilt from the pods, say). The old file and its side record are moved
// aside as <name>.damaged-<UTC time>, never deleted; the returned paths say
// where. leases must pass the checks of a load: no address twice, none
// outside its pool. A raild that holds the store open makes Rebuild fail:
// stop it first. On failure the old files are put back.
func Rebuild(path string, pools *Pools, leases []Lease, now time.Time) ([]string, error) {
	if err := checkLoadedLeases(path, leases, pools); err != nil {
		return nil, fmt.Errorf("ipam: rebuild: %w", err)
	}
	if err := checkKeys(leases); err != nil {
		return nil, err
	}
	return store.Rebuild(path, leases, now)
}

// checkKeys refuses a lease without its key or address, and two leases
// for one (sandbox, interface).
func checkKeys(leases []Lease) error {
	seen := make(map[Key]bool, len(leases))
	for i, l := range leases {
		if err := (Request{Sandbox: l.Sandbox, IfName: l.IfName}).validate(fmt.Sprintf("leases[%d]", i)); err != nil {
			return fmt.Errorf("ipam: rebuild: %w", err)
		}
		if !l.Address.IsValid() {
			return fmt.Errorf("ipam: rebuild: leases[%d].address: not a valid address with prefix length, e.g. 10.0.0.5/24", i)
		}
		if seen[l.Key()] {
			return fmt.Errorf("ipam: rebuild: two leases for sandbox %q interface %q: give each interface one", l.Sandbox, l.IfName)
		}
		seen[l.Key()] = true
	}
	return nil
}

// StoreExists says whether a lease store was ever made at path: its file
// or its side record is there (whatever they hold). Neither is a first
// start, or a store that was removed whole.
func StoreExists(path string) (bool, error) { return store.Exists(path) }
