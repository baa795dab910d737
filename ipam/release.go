package ipam

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"time"

	"github.com/railcni/rail/ipam/store"
)

// Release frees every lease a CNI DEL of (sandbox, attachment, network)
// made. Unknown leases are not an error: it returns nil, nil. A DEL for an
// older sandbox never touches a newer one's leases: the sandbox is part of
// the key.
func (a *Allocator) Release(sandbox, attachment, network string) ([]Lease, error) {
	if sandbox == "" {
		return nil, errors.New("ipam: release: sandbox: empty: want the sandbox (CNI container) ID")
	}
	return a.releaseWhere(func() []Key {
		var keys []Key
		for k := range a.bySandbox[sandbox] {
			if l := a.leases[k].lease; l.CNIIfName == attachment && l.Network == network {
				keys = append(keys, k)
			}
		}
		return keys
	})
}

// ReleaseSandbox frees every lease of a sandbox, whatever made it (the
// second signal, e.g. NRI StopPodSandbox, for a DEL that never came).
func (a *Allocator) ReleaseSandbox(sandbox string) ([]Lease, error) {
	if sandbox == "" {
		return nil, errors.New("ipam: release sandbox: sandbox: empty: want the sandbox (CNI container) ID")
	}
	return a.releaseWhere(func() []Key {
		var keys []Key
		for k := range a.bySandbox[sandbox] {
			keys = append(keys, k)
		}
		return keys
	})
}

// GC frees the leases of network whose attachment is not among valid, as
// the CNI GC verb gives them: Key{Sandbox, IfName: attachment (CNI_IFNAME)}.
// Leases still being written (an ADD in flight) are left alone.
func (a *Allocator) GC(network string, valid []Key) ([]Lease, error) {
	keep := make(map[Key]struct{}, len(valid))
	for _, k := range valid {
		keep[k] = struct{}{}
	}
	return a.releaseWhere(func() []Key {
		var keys []Key
		for k, e := range a.leases {
			l := e.lease
			if _, ok := keep[Key{Sandbox: l.Sandbox, IfName: l.CNIIfName}]; !ok && l.Network == network && e.committed {
				keys = append(keys, k)
			}
		}
		return keys
	})
}

// ReleaseIf frees the leases for which pred is true (reconcile: e.g. the
// netns is gone). pred runs without the allocator's lock, on a snapshot; a
// lease replaced in the meantime is left alone.
func (a *Allocator) ReleaseIf(pred func(Lease) bool) ([]Lease, error) {
	chosen := map[Key]Lease{}
	for _, l := range a.Leases() {
		if pred(l) {
			chosen[l.Key()] = l
		}
	}
	if len(chosen) == 0 {
		return nil, nil
	}
	return a.releaseWhere(func() []Key {
		var keys []Key
		for k, want := range chosen {
			e := a.leases[k]
			if e != nil && e.lease.Address == want.Address && e.lease.Created.Equal(want.Created) {
				keys = append(keys, k)
			}
		}
		return keys
	})
}

// releaseWhere frees the leases whose keys selectKeys returns (it runs with
// the mutex held). Each address stays taken until the delete is on disk,
// then cools down.
func (a *Allocator) releaseWhere(selectKeys func() []Key) ([]Lease, error) {
	for {
		a.mu.Lock()
		if a.closed {
			a.mu.Unlock()
			return nil, fmt.Errorf("ipam: release: %w", ErrClosed)
		}
		keys := selectKeys()
		if wait := a.busyAmong(keys); wait != nil {
			a.mu.Unlock()
			<-wait // an allocate or release of one of these keys is in flight
			continue
		}
		if len(keys) == 0 {
			a.mu.Unlock()
			return nil, nil
		}
		rel, err := a.prepareRelease(keys)
		if err != nil {
			a.mu.Unlock()
			return nil, err
		}
		done := make(chan struct{})
		for _, k := range keys {
			a.leases[k].busy = done
		}
		a.mu.Unlock()
		return a.finishRelease(rel, done)
	}
}

// pendingRelease is a release written but not yet applied in memory.
type pendingRelease struct {
	ses      *store.Session
	released []Lease
	cooling  map[netip.Addr]bool // addresses that start a cooldown
	at       time.Time
}

// prepareRelease opens the session releasing keys. Call with the mutex held.
func (a *Allocator) prepareRelease(keys []Key) (*pendingRelease, error) {
	rel := &pendingRelease{ses: a.store.Begin(), cooling: map[netip.Addr]bool{}, at: a.clock()}
	a.sweep(rel.at)
	for _, k := range keys {
		l := a.leases[k].lease
		rel.released = append(rel.released, l)
		rel.ses.DeleteLease(k)
		if a.cooldown == 0 {
			continue
		}
		if err := rel.ses.PutCooldown(store.Cooldown{Addr: l.Address.Addr(), Pool: l.Pool, Released: rel.at}); err != nil {
			rel.ses.Cancel()
			return nil, err
		}
		rel.cooling[l.Address.Addr()] = true
	}
	a.takePurge(rel.ses)
	slices.SortFunc(rel.released, compareLeases)
	return rel, nil
}

// finishRelease writes the release, then frees the addresses into their
// cooldown, or leaves the leases as they were if the write failed.
func (a *Allocator) finishRelease(rel *pendingRelease, done chan struct{}) ([]Lease, error) {
	err := rel.ses.Commit()
	a.mu.Lock()
	defer a.mu.Unlock()
	defer close(done)
	if err != nil {
		for _, l := range rel.released {
			a.leases[l.Key()].busy = nil
		}
		return nil, fmt.Errorf("ipam: release: %w", err)
	}
	for _, l := range rel.released {
		a.removeEntry(l.Key())
		addr := l.Address.Addr()
		if rel.cooling[addr] {
			a.startCooling(addr, l.Pool, rel.at)
		}
	}
	return rel.released, nil
}
