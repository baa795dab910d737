package ipam

import (
	"net/netip"
	"time"

	"github.com/railcni/rail/ipam/store"
)

// startCooling puts a released address into its cooldown. Call with the
// mutex held.
func (a *Allocator) startCooling(addr netip.Addr, pool string, now time.Time) {
	a.cooling[addr] = coolEntry{pool: pool, at: now}
	a.coolQueue = append(a.coolQueue, coolItem{addr: addr, at: now})
}

// sweep forgets cooldowns that are over and queues their records for
// deletion with the next write. Call with the mutex held.
func (a *Allocator) sweep(now time.Time) {
	n := 0
	for _, item := range a.coolQueue {
		if !a.expired(item.at, now) {
			break
		}
		n++
		c, ok := a.cooling[item.addr]
		if !ok || !c.at.Equal(item.at) {
			continue // reused or released again since: a later item covers it
		}
		delete(a.cooling, item.addr)
		a.purge = append(a.purge, store.Cooldown{Addr: item.addr, Pool: c.pool, Released: c.at})
	}
	a.coolQueue = a.coolQueue[n:]
}

// takePurge hands the queued deletions to a session. Losing them (a failed
// write) only leaves expired records, which the next Open drops. Call with
// the mutex held.
func (a *Allocator) takePurge(ses *store.Session) {
	for _, c := range a.purge {
		ses.PurgeCooldown(c)
	}
	a.purge = nil
}

// poolUsage counts the pool's leases and the addresses still cooling.
// Call with the mutex held.
func (a *Allocator) poolUsage(pool string, now time.Time) (used, cooling uint64) {
	for _, e := range a.leases {
		if e.lease.Pool == pool {
			used++
		}
	}
	for _, c := range a.cooling {
		if c.pool == pool && !a.expired(c.at, now) {
			cooling++
		}
	}
	return used, cooling
}
