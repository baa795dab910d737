package ipam

import (
	"fmt"
	"net/netip"
	"time"
)

// Allocate returns the lease of req's key, making one if there is none.
// The same key gets the same lease back. The lease is on disk when
// Allocate returns.
func (a *Allocator) Allocate(req Request) (Lease, error) {
	leases, err := a.AllocateMany([]Request{req})
	if err != nil {
		return Lease{}, err
	}
	return leases[0], nil
}

// AllocateMany allocates for several interfaces of one pod at once: all
// leases or none, written in one transaction. Keys that already hold a
// matching lease get it back.
func (a *Allocator) AllocateMany(reqs []Request) ([]Lease, error) {
	if err := validateRequests(reqs); err != nil {
		return nil, err
	}
	if len(reqs) == 0 {
		return nil, nil
	}
	return a.allocate(func(NICUse) ([]Request, error) { return reqs, nil })
}

// AllocatePlaced is AllocateMany for requests that depend on who holds
// which NIC: place reads the NICs' use and returns the requests, and they
// are reserved in the same critical section, so two concurrent calls
// never see the same NIC free. place runs with the allocator's lock held
// (it must not call the allocator) and may run again when a key it asks
// for has a write in flight. Its error is returned as it is.
func (a *Allocator) AllocatePlaced(place func(NICUse) ([]Request, error)) ([]Lease, error) {
	return a.allocate(func(use NICUse) ([]Request, error) {
		reqs, err := place(use)
		if err != nil {
			return nil, err
		}
		return reqs, validateRequests(reqs)
	})
}

// allocate reserves what choose asks for, then writes it.
func (a *Allocator) allocate(choose func(NICUse) ([]Request, error)) ([]Lease, error) {
	for {
		r, err := a.reserve(choose)
		if err != nil {
			return nil, err
		}
		if r.wait != nil {
			<-r.wait // another write holds one of our keys; then look again
			continue
		}
		if len(r.fresh) == 0 {
			return r.leases, nil
		}
		if err := a.commitReserved(r.fresh, r.done); err != nil {
			return nil, err
		}
		return r.leases, nil
	}
}

// reservation is what reserve did under the mutex.
type reservation struct {
	leases []Lease       // the answer, in request order
	fresh  []*entry      // new leases, busy until written
	done   chan struct{} // closed when fresh are written or dropped
	wait   chan struct{} // set instead when a key has a write in flight
}

func validateRequests(reqs []Request) error {
	seen := make(map[Key]int, len(reqs))
	for i, r := range reqs {
		at := fmt.Sprintf("requests[%d]", i)
		if err := r.validate(at); err != nil {
			return fmt.Errorf("ipam: allocate: %w", err)
		}
		if j, dup := seen[r.Key()]; dup {
			return fmt.Errorf("ipam: allocate: %s: same sandbox %q and ifname %q as requests[%d]: give each interface its own name", at, r.Sandbox, r.IfName, j)
		}
		seen[r.Key()] = i
	}
	return nil
}

// reserve picks addresses for the requests choose makes without a lease
// and records them in memory as busy. It returns a channel to wait on,
// instead, when one of the keys has a write in flight.
func (a *Allocator) reserve(choose func(NICUse) ([]Request, error)) (reservation, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return reservation{}, fmt.Errorf("ipam: allocate: %w", ErrClosed)
	}
	reqs, err := choose(NICUse{a: a})
	if err != nil {
		return reservation{}, err
	}
	keys := make([]Key, len(reqs))
	for i, r := range reqs {
		keys[i] = r.Key()
	}
	if wait := a.busyAmong(keys); wait != nil {
		return reservation{wait: wait}, nil
	}
	now := a.clock()
	a.sweep(now)
	res := reservation{leases: make([]Lease, len(reqs)), done: make(chan struct{})}
	for i, r := range reqs {
		if e := a.leases[keys[i]]; e != nil {
			if !answers(e.lease, r) {
				a.unreserve(res.fresh)
				return reservation{}, fmt.Errorf("ipam: allocate %s/%s: %w", r.Sandbox, r.IfName, &LeaseConflictError{Existing: e.lease, Requested: r})
			}
			res.leases[i] = cloneLease(e.lease)
			continue
		}
		l, err := a.newLeaseFor(r, now)
		if err != nil {
			a.unreserve(res.fresh)
			return reservation{}, fmt.Errorf("ipam: allocate %s/%s: %w", r.Sandbox, r.IfName, err)
		}
		e := &entry{lease: l, busy: res.done}
		a.addEntry(e)
		delete(a.cooling, l.Address.Addr()) // expired, or pick would not have chosen it
		a.cursor[r.Pool] = l.Address.Addr()
		res.fresh = append(res.fresh, e)
		res.leases[i] = cloneLease(l)
	}
	return res, nil
}

// newLeaseFor picks the next free address of the request's pool.
func (a *Allocator) newLeaseFor(r Request, now time.Time) (Lease, error) {
	p, ok := a.pools.Get(r.Pool)
	if !ok {
		return Lease{}, &UnknownPoolError{Pool: r.Pool, Known: a.pools.Names()}
	}
	if !p.HasNodeSlice() {
		return Lease{}, &NoNodeSliceError{Pool: p.Name(), Node: a.pools.Node()}
	}
	addr, ok := a.pick(p, now)
	if !ok {
		used, cooling := a.poolUsage(p.Name(), now)
		return Lease{}, &ExhaustedError{Pool: p.Name(), Size: p.Size(), Used: used, Cooling: cooling}
	}
	return newLease(r, p, addr, now), nil
}

// unreserve drops reservations made by a reserve that then failed.
func (a *Allocator) unreserve(fresh []*entry) {
	for _, e := range fresh {
		a.removeEntry(e.lease.Key())
	}
}

// commitReserved writes the reserved leases in one session, then marks
// them committed, or drops them if the write failed. The mutex is not held
// while writing.
func (a *Allocator) commitReserved(fresh []*entry, done chan struct{}) error {
	ses := a.store.Begin()
	for _, e := range fresh {
		if err := ses.PutLease(e.lease); err != nil {
			ses.Cancel()
			a.finishReserved(fresh, done, err)
			return err
		}
		ses.DeleteCooldown(e.lease.Address.Addr())
	}
	a.mu.Lock()
	a.takePurge(ses)
	a.mu.Unlock()
	err := ses.Commit()
	a.finishReserved(fresh, done, err)
	return err
}

func (a *Allocator) finishReserved(fresh []*entry, done chan struct{}, err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, e := range fresh {
		if err != nil {
			a.removeEntry(e.lease.Key())
			continue
		}
		e.committed, e.busy = true, nil
	}
	close(done)
}

// pick returns the first free address of p after the pool's cursor
// (next-fit), wrapping around once. Among any n+1 distinct candidates at
// most n are taken (n = leased + cooling addresses), so the walk is bounded
// by that, or by the pool's size.
func (a *Allocator) pick(p *Pool, now time.Time) (netip.Addr, bool) {
	limit := min(p.Size(), satAdd(uint64(len(a.used)+len(a.cooling)), 1))
	if limit == 0 {
		return netip.Addr{}, false
	}
	i, cand := p.startAfter(a.cursor[p.Name()])
	for n := uint64(0); n < limit; n++ {
		if a.free(cand, now) {
			return cand, true
		}
		i, cand = p.after(i, cand)
	}
	return netip.Addr{}, false
}

func (a *Allocator) free(addr netip.Addr, now time.Time) bool {
	if a.used[addr] > 0 {
		return false
	}
	c, cooling := a.cooling[addr]
	return !cooling || a.expired(c.at, now)
}

// startAfter returns the span index and address following cursor, wrapping
// to the pool's first address. Only call it on a pool with addresses.
func (p *Pool) startAfter(cursor netip.Addr) (int, netip.Addr) {
	if !cursor.IsValid() || cursor.Is4() != p.Prefix.Addr().Is4() {
		return 0, p.spans[0].First
	}
	next := cursor.Next()
	if !next.IsValid() {
		return 0, p.spans[0].First
	}
	for i, s := range p.spans {
		if next.Compare(s.Last) <= 0 {
			if next.Less(s.First) {
				next = s.First
			}
			return i, next
		}
	}
	return 0, p.spans[0].First
}

// after returns the address following cand (in span i), wrapping around.
func (p *Pool) after(i int, cand netip.Addr) (int, netip.Addr) {
	if next := cand.Next(); next.IsValid() && next.Compare(p.spans[i].Last) <= 0 {
		return i, next
	}
	i = (i + 1) % len(p.spans)
	return i, p.spans[i].First
}
