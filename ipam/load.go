package ipam

import (
	"fmt"
	"net/netip"

	"github.com/railcni/rail/ipam/store"
)

// checkLoadedLeases refuses leases that cannot both be true (one address
// leased to two interfaces: the store is damaged) and leases whose address
// lies outside its pool's subnet (the pool's subnet changed under running
// pods). A lease made when its pool had another prefix length is kept as
// long as its address is still inside the pool: the pod keeps the prefix
// it was given, new leases get the pool's. A pool that is no longer
// configured keeps its leases.
func checkLoadedLeases(path string, leases []Lease, pools *Pools) error {
	holder := make(map[netip.Addr]Key, len(leases))
	for _, l := range leases {
		addr := l.Address.Addr()
		if k, dup := holder[addr]; dup {
			return store.Damaged(path, "damaged: address %s is leased twice, to %s/%s and %s/%s",
				addr, k.Sandbox, k.IfName, l.Sandbox, l.IfName)
		}
		holder[addr] = l.Key()
		if p, ok := pools.Get(l.Pool); ok && !p.Prefix.Contains(addr) {
			return &OutsidePoolError{Path: path, Lease: l, Subnet: p.Prefix}
		}
	}
	return nil
}

// OutsidePoolError says a lease on disk holds an address outside its
// pool's configured subnet: the pool's subnet was changed while pods still
// hold addresses of the old one.
type OutsidePoolError struct {
	Path   string
	Lease  Lease
	Subnet netip.Prefix // the pool's subnet now
}

func (e *OutsidePoolError) Error() string {
	l := e.Lease
	return fmt.Sprintf("lease store %s: lease %s/%s (pod %s/%s) holds %s, outside pool %q, now %s: the pool's subnet was changed while pods hold addresses of the old one; put the old subnet back (or widen it to cover them), and change it once those pods are gone",
		e.Path, l.Sandbox, l.IfName, l.PodNamespace, l.PodName, l.Address, l.Pool, e.Subnet)
}
