// Package inventory is raild's one live view of the node: the machine as
// pkg/topology reads it now, merged with the leases so a NIC inside a pod
// is still known, published as immutable, versioned snapshots. Rescans
// come from netlink link events in the host netns and from a timer;
// readers (placement, NRI, the device plugin, doctor, topo, metrics) take
// the current snapshot and never change it.
package inventory

import (
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/railcni/rail/pkg/topology"
)

// Snapshot is the node at one moment. It is never changed once published.
type Snapshot struct {
	Version uint64
	Taken   time.Time
	Cause   string // "start", "link event", "rescan timer", ...
	Machine *topology.Machine
	// InPod maps a NIC whose netdev or RDMA device sits in a pod now (so
	// the host no longer shows all of it) to the pod holding it. Its
	// record in Machine is the last one seen on the host.
	InPod map[string]string
	// Holders maps every NIC a lease holds to the pods holding it.
	Holders map[string]string
	// Changes are the NICs whose port state differs from the previous
	// snapshot's (added and removed NICs included).
	Changes []StateChange
	// Away are the netdevs of NICs that left the host netns (moved into
	// a pod), by name, with their RDMA devices: their NICs show no such
	// netdev, and the link events of their return are awaited by name.
	Away map[string]string
	// Protected are the node's own NICs and why (protect.go);
	// ProtectErr is why they could not be read this time, if so.
	Protected  map[string]topology.Protection
	ProtectErr error
}

// Holders says which pod holds each NIC, from the lease store.
type Holders func() map[string]string

// Discoverer reads the machine below a root (topology.Discover).
type Discoverer func(root string) (*topology.Machine, error)

// Inventory owns the node's current snapshot.
type Inventory struct {
	root     string
	discover Discoverer
	holders  Holders
	now      func() time.Time
	sys      *topology.Sysfs // one device or netdev looked up at a time
	// linksDescribed: the sysfs read is the running kernel's own (root
	// "/"), so a link it shows without a `device` is one the kernel
	// knows has no parent device: the kernel filter of link events can
	// tell new links that could be NICs (daemon/linkfilter). A fake tree's
	// stand-ins (veths) are NICs only in the tree.
	linksDescribed bool
	// linkHere says whether a link of that name is in raild's netns now
	// (linkInNetns): an event that a NIC's netdev left is taken only
	// while it is still gone.
	linkHere func(name string) bool

	rescanMu   sync.Mutex              // one rescan at a time, so versions follow causes
	remembered map[string]topology.NIC // NIC records saved by an earlier raild (Restore)
	found      *topology.Machine       // the machine as last read, before the merge with the leases
	away       map[string]string       // found's netdevs away from the host netns (Snapshot.Away); never changed in place
	// protector reads the node's own NICs (nil: sysfs alone). Its own
	// lock, never held while calling out: Recheck runs under the
	// allocator's lock, and a rescan holds rescanMu while it asks the
	// allocator for the holders.
	protectorMu sync.Mutex
	protector   Protector
	current     atomic.Pointer[Snapshot]
	quiet       quietHolders // holders found to change nothing in a snapshot
	stats       counters
}

// quietHolders are leases' holders that a device read found to give the
// same view as snapshot snap (see Update).
type quietHolders struct {
	snap    *Snapshot
	holders map[string]string
}

// New reads the machine once and publishes version 1. holders may be nil
// (no leases yet: nothing is carried forward).
func New(root string, discover Discoverer, holders Holders) (*Inventory, error) {
	if discover == nil {
		discover = topology.Discover
	}
	if holders == nil {
		holders = func() map[string]string { return nil }
	}
	sys, err := topology.OpenSysfs(root)
	if err != nil {
		return nil, fmt.Errorf("inventory: %w", err)
	}
	inv := &Inventory{root: root, discover: discover, holders: holders, now: time.Now, sys: sys,
		linksDescribed: filepath.Clean(root) == "/", linkHere: linkInNetns}
	if _, err := inv.Rescan("start"); err != nil {
		return nil, err
	}
	inv.lookNetdevNICs(inv.Machine())
	return inv, nil
}

// Rediscover reads the whole machine again with another discoverer, which
// every later rescan uses: on a node its node class puts in softRoCE mode
// (known only once the Node is read), one that also reads netdev-only
// NICs (topology.Options.NetdevNICs). Call it before Run: the link-event
// filter reads through what it sets.
func (inv *Inventory) Rediscover(cause string, discover Discoverer) (*Snapshot, error) {
	inv.rescanMu.Lock()
	defer inv.rescanMu.Unlock()
	m, err := discover(inv.root)
	if err != nil {
		return nil, fmt.Errorf("inventory rescan (%s): %w", cause, err)
	}
	inv.stats.fullRescans.Add(1)
	inv.discover = discover
	inv.lookNetdevNICs(m)
	return inv.publishFound(cause, m, inv.holders()), nil
}

// lookNetdevNICs makes one-device reads look up netdev-only NICs by
// their netdevs exactly when m counts them (a softRoCE node), as Discover
// read it. New and Rediscover call it before any device is read again
// (Rediscover before Run).
func (inv *Inventory) lookNetdevNICs(m *topology.Machine) {
	inv.sys = inv.sys.WithNetdevNICs(m.NetdevNICs)
}

// SetHolders installs the lease view once the lease store is open.
func (inv *Inventory) SetHolders(h Holders) {
	inv.rescanMu.Lock()
	defer inv.rescanMu.Unlock()
	inv.holders = h
}

// Current is the latest snapshot; callers must not change it.
func (inv *Inventory) Current() *Snapshot { return inv.current.Load() }

// Machine is the latest snapshot's machine.
func (inv *Inventory) Machine() *topology.Machine { return inv.Current().Machine }

// Rescan reads the whole machine again, merges it with the previous
// snapshot and the leases, and publishes it as the next version.
func (inv *Inventory) Rescan(cause string) (*Snapshot, error) {
	inv.rescanMu.Lock()
	defer inv.rescanMu.Unlock()
	inv.stats.fullRescans.Add(1)
	m, err := inv.discover(inv.root)
	if err != nil {
		return nil, fmt.Errorf("inventory rescan (%s): %w", cause, err)
	}
	return inv.publishFound(cause, m, inv.holders()), nil
}

// publishFound merges what was read with the previous snapshot and the
// leases, and publishes it as the next version. rescanMu is held.
func (inv *Inventory) publishFound(cause string, found *topology.Machine, holders map[string]string) *Snapshot {
	prev := inv.current.Load()
	snap := &Snapshot{Taken: inv.now(), Cause: cause, Version: 1, Holders: holders}
	if prev != nil {
		snap.Version = prev.Version + 1
	}
	snap.Machine, snap.InPod = merge(inv.lastSeen(prev), found, snap.Holders)
	snap.Changes = stateChanges(prev, snap.Machine)
	snap.Protected, snap.ProtectErr = inv.protection(prev, snap.Machine)
	inv.found = found
	inv.away = stillAway(inv.away, found)
	snap.Away = inv.away
	inv.current.Store(snap)
	inv.stats.published.Add(1)
	return snap
}

// lastSeen finds a NIC's last host record: in the previous snapshot, else
// in what an earlier raild saved.
func (inv *Inventory) lastSeen(prev *Snapshot) func(name string) (topology.NIC, bool) {
	return func(name string) (topology.NIC, bool) {
		if prev != nil {
			if nic, ok := prev.Machine.NICByName(name); ok && nic.Netdev != "" {
				return nic, true
			}
		}
		nic, ok := inv.remembered[name]
		return nic, ok
	}
}
