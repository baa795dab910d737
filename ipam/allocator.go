package ipam

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"sync"
	"time"

	"github.com/railcni/rail/ipam/store"
)

// Options tune an Allocator.
type Options struct {
	Cooldown time.Duration    // how long a released address waits before reuse; 0: none
	Now      func() time.Time // clock, for tests; default time.Now
	// DamagedHint is appended to every error saying the lease store is
	// damaged, at open and while it runs: what to do about it.
	DamagedHint string
	// VFOf finds the VF a vf-mode lease written before leases had a VF
	// field names in its NICs (its PCI address; `raild recover`'s: its
	// RDMA device): the VF's PCI address and its PF's port. Open rewrites
	// such leases in the current form (vfform.go); nil: no VF is found.
	VFOf func(id string) (pci, port string, ok bool)
}

// entry is one lease in memory. busy is non-nil while a write for the key
// is in flight; it is closed when the write is done, whatever the result.
type entry struct {
	lease     Lease
	committed bool // on disk
	busy      chan struct{}
}

type coolEntry struct {
	pool string
	at   time.Time
}

type coolItem struct {
	addr netip.Addr
	at   time.Time
}

// Allocator hands out addresses from Pools and keeps leases in the lease
// store (ipam/store): every change is one store session, committed before
// memory says it is done, or cancelled.
// It is safe for concurrent use.
type Allocator struct {
	pools    *Pools
	store    *store.Store
	cooldown time.Duration
	now      func() time.Time
	vfOf     func(id string) (pci, port string, ok bool) // Options.VFOf

	mu        sync.Mutex
	closed    bool
	leases    map[Key]*entry
	bySandbox map[string]map[Key]struct{}
	byNIC     map[string]map[string]map[Key]*entry // NIC -> mode -> the leases naming it (NICUse)
	used      map[netip.Addr]int                   // leases (committed or reserved) per address
	cooling   map[netip.Addr]coolEntry
	coolQueue []coolItem            // cooling addresses in release order, for the sweep
	purge     []store.Cooldown      // expired cooldown records to delete with the next write
	cursor    map[string]netip.Addr // per pool: last address handed out (next-fit)
}

// Open opens (or creates) the lease file at path, loads its leases and
// cooldowns and rebuilds the in-memory state.
func Open(path string, pools *Pools, opt Options) (*Allocator, error) {
	if opt.Cooldown < 0 {
		return nil, fmt.Errorf("ipam: cooldown %s: negative: want 0 (reuse at once) or a positive duration", opt.Cooldown)
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	st, c, err := store.Open(path, store.Options{DamagedHint: opt.DamagedHint})
	if err != nil {
		return nil, err
	}
	a := &Allocator{
		pools: pools, store: st, cooldown: opt.Cooldown, now: opt.Now, vfOf: opt.VFOf,
		leases: map[Key]*entry{}, bySandbox: map[string]map[Key]struct{}{}, byNIC: map[string]map[string]map[Key]*entry{},
		used: map[netip.Addr]int{}, cooling: map[netip.Addr]coolEntry{}, cursor: map[string]netip.Addr{},
	}
	if err := a.load(c); err != nil {
		var d *DamagedError
		if errors.As(err, &d) {
			d.Hint = opt.DamagedHint
		}
		return nil, errors.Join(err, st.Close())
	}
	return a, nil
}

// load rebuilds memory from what the store holds, after checking that no
// address is leased twice, and drops stale cooldown records.
func (a *Allocator) load(c *store.Contents) error {
	leases, cools := c.Leases, c.Cooldowns
	if err := checkLoadedLeases(a.store.Path(), leases, a.pools); err != nil {
		return err
	}
	ses := a.store.Begin()
	if err := upgradeVFLeases(leases, a.vfOf, ses); err != nil {
		return err
	}
	latest := map[string]time.Time{}
	for _, l := range leases {
		a.addEntry(&entry{lease: l, committed: true})
		if t, seen := latest[l.Pool]; !seen || t.Before(l.Created) {
			latest[l.Pool], a.cursor[l.Pool] = l.Created, l.Address.Addr()
		}
	}
	now := a.now()
	for _, c := range cools {
		if a.used[c.Addr] > 0 || a.expired(c.Released, now) {
			ses.PurgeCooldown(c)
			continue
		}
		a.cooling[c.Addr] = coolEntry{pool: c.Pool, at: c.Released}
		a.coolQueue = append(a.coolQueue, coolItem{addr: c.Addr, at: c.Released})
	}
	slices.SortFunc(a.coolQueue, func(x, y coolItem) int { return x.at.Compare(y.at) })
	a.clock() // records released after now: the clock was set back while raild was down
	return ses.Commit()
}

// Close closes the lease file. Leases stay on disk.
func (a *Allocator) Close() error {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return nil
	}
	a.closed = true
	a.mu.Unlock()
	return a.store.Close()
}

// Pools returns the pools the allocator hands out from.
func (a *Allocator) Pools() *Pools { return a.pools }

func (a *Allocator) expired(released, now time.Time) bool {
	return !now.Before(released.Add(a.cooldown))
}

func (a *Allocator) addEntry(e *entry) {
	k := e.lease.Key()
	a.leases[k] = e
	if a.bySandbox[k.Sandbox] == nil {
		a.bySandbox[k.Sandbox] = map[Key]struct{}{}
	}
	a.bySandbox[k.Sandbox][k] = struct{}{}
	a.indexNICs(e)
	a.used[e.lease.Address.Addr()]++
}

func (a *Allocator) removeEntry(k Key) {
	e, ok := a.leases[k]
	if !ok {
		return
	}
	delete(a.leases, k)
	a.unindexNICs(e)
	if keys := a.bySandbox[k.Sandbox]; keys != nil {
		delete(keys, k)
		if len(keys) == 0 {
			delete(a.bySandbox, k.Sandbox)
		}
	}
	addr := e.lease.Address.Addr()
	if a.used[addr]--; a.used[addr] <= 0 {
		delete(a.used, addr)
	}
}

// busyAmong returns the channel of the first key with a write in flight.
func (a *Allocator) busyAmong(keys []Key) chan struct{} {
	for _, k := range keys {
		if e := a.leases[k]; e != nil && e.busy != nil {
			return e.busy
		}
	}
	return nil
}
