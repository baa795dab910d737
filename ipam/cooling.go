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

// clock is the time now, for a caller holding the mutex. A wall clock set
// back (a cooldown released "in the future") would make the cooldowns
// last the jump on top: those are restarted at now instead, so each
// lasts at most the cooldown from when the jump is seen, and never less
// than the cooldown. (time.Now's monotonic reading already keeps one
// process's own comparisons right; this covers the records read back at
// Open, which carry the wall clock only, and any clock without one.)
func (a *Allocator) clock() time.Time {
	now := a.now()
	if n := len(a.coolQueue); n == 0 || !a.coolQueue[n-1].at.After(now) {
		return now // the queue is sorted: nothing is in the future
	}
	for i, item := range a.coolQueue {
		if !item.at.After(now) {
			continue
		}
		if c, ok := a.cooling[item.addr]; ok && c.at.Equal(item.at) {
			c.at = now
			a.cooling[item.addr] = c
		}
		a.coolQueue[i].at = now
	}
	return now
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
