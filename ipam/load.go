package ipam

import (
	"net/netip"

	"github.com/railcni/rail/ipam/store"
)

// checkLoadedLeases refuses leases that cannot both be true: one address leased
// to two interfaces, or a lease whose address lies outside its pool's
// subnet (a pool that is no longer configured keeps its leases).
func checkLoadedLeases(path string, leases []Lease, pools *Pools) error {
	holder := make(map[netip.Addr]Key, len(leases))
	for _, l := range leases {
		addr := l.Address.Addr()
		if k, dup := holder[addr]; dup {
			return store.Damaged(path, "damaged: address %s is leased twice, to %s/%s and %s/%s",
				addr, k.Sandbox, k.IfName, l.Sandbox, l.IfName)
		}
		holder[addr] = l.Key()
		if p, ok := pools.Get(l.Pool); ok && (!p.Prefix.Contains(addr) || l.Address.Bits() != p.Prefix.Bits()) {
			return store.Damaged(path, "lease %s/%s holds %s, outside pool %q (%s): the record is damaged, or the pool's subnet changed under running pods",
				l.Sandbox, l.IfName, l.Address, l.Pool, p.Prefix)
		}
	}
	return nil
}
