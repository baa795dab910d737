package ipam

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"sync"
	"time"
)

// defaultBatchDelay is how long a batch of concurrent writes waits for more
// writers before it commits (bbolt's MaxBatchDelay; bbolt's own default is 10ms).
const defaultBatchDelay = 2 * time.Millisecond

// Options tune an Allocator.
type Options struct {
	Cooldown   time.Duration    // how long a released address waits before reuse; 0: none
	Now        func() time.Time // clock, for tests; default time.Now
	BatchDelay time.Duration    // max wait to gather concurrent writes; default 2ms
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
	raw  []byte // the record on disk
}

type coolItem struct {
	addr netip.Addr
	at   time.Time
}

// Allocator hands out addresses from Pools and keeps leases in a bbolt file.
// It is safe for concurrent use.
type Allocator struct {
	pools    *Pools
	store    *store
	cooldown time.Duration
	now      func() time.Time

	mu        sync.Mutex
	closed    bool
	leases    map[Key]*entry
	bySandbox map[string]map[Key]struct{}
	byNIC     map[string]map[string]map[Key]*entry // NIC -> mode -> the leases naming it (NICUse)
	used      map[netip.Addr]int                   // leases (committed or reserved) per address
	cooling   map[netip.Addr]coolEntry
	coolQueue []coolItem            // cooling addresses in release order, for the sweep
	purge     []kv                  // expired cooldown records to delete with the next write
	cursor    map[string]netip.Addr // per pool: last address handed out (next-fit)
}

// Open opens (or creates) the lease file at path, loads its leases and
// cooldowns and rebuilds the in-memory state.
func Open(path string, pools *Pools, opt Options) (*Allocator, error) {
	if opt.Cooldown < 0 {
		return nil, fmt.Errorf("ipam: cooldown %s: negative: want 0 (reuse at once) or a positive duration", opt.Cooldown)
	}
	if opt.BatchDelay < 0 {
		return nil, fmt.Errorf("ipam: batch delay %s: negative: want a positive duration, or 0 for the default", opt.BatchDelay)
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.BatchDelay == 0 {
		opt.BatchDelay = defaultBatchDelay
	}
	st, c, err := openStore(path, opt.BatchDelay)
	if err != nil {
		return nil, err
	}
	a := &Allocator{
		pools: pools, store: st, cooldown: opt.Cooldown, now: opt.Now,
		leases: map[Key]*entry{}, bySandbox: map[string]map[Key]struct{}{}, byNIC: map[string]map[string]map[Key]*entry{},
		used: map[netip.Addr]int{}, cooling: map[netip.Addr]coolEntry{}, cursor: map[string]netip.Addr{},
	}
	if err := a.load(c); err != nil {
		return nil, errors.Join(err, st.close())
	}
	return a, nil
}

// load rebuilds memory from what the store holds, after checking that no
// address is leased twice, and drops stale cooldown records.
func (a *Allocator) load(c *contents) error {
	leases, cools := c.leases, c.cools
	if err := checkLoadedLeases(a.store.path, leases, a.pools); err != nil {
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
	op := &writeOp{}
	for _, c := range cools {
		if a.used[c.addr] > 0 || a.expired(c.rec.Released, now) {
			op.purge = append(op.purge, kv{k: []byte(c.addr.String()), v: c.raw})
			continue
		}
		a.cooling[c.addr] = coolEntry{pool: c.rec.Pool, at: c.rec.Released, raw: c.raw}
		a.coolQueue = append(a.coolQueue, coolItem{addr: c.addr, at: c.rec.Released})
	}
	slices.SortFunc(a.coolQueue, func(x, y coolItem) int { return x.at.Compare(y.at) })
	return a.store.commit(op)
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
	return a.store.close()
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
