package inventory

import (
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/railcni/rail/pkg/topology"
)

// kernelWatch keeps the kernel filter of a kernelFiltered source (see
// kfilter.go) on the links the inventory follows: the netdevs of the
// current snapshot's NICs and VFs (their names resolved to ifindexes in
// the source's netns), and every link whose event concerned the
// inventory (a NIC's or VF's netdev that came, a new NIC-like link, an
// upper device of one that stayed past its burst), until it goes.
//
// The reader changes it as it classifies, and replaces the program before
// the event's concern reaches the loop, so whatever the kernel dropped
// before the link was watched the loop's read sees; the loop changes it
// after publishing a snapshot (new names) and when it finds that an upper
// device left unseen.
type kernelWatch struct {
	src kernelFiltered
	// parents: a new link without a parent device is no NIC (the sysfs
	// read is the kernel's own, and the kernel names parent devices).
	parents bool
	// sysNetdevs, on a machine whose sysfs is not the kernel's (a fake
	// one: nil on the kernel's own), lists the netdevs that sysfs could
	// take for NICs'; a new link then passes only when named (byName in
	// kfilter.go): a snapshot's netdev not in the netns, or one of these
	// that no snapshot names (extra, read at each snapshot).
	sysNetdevs func() []string

	mu      sync.Mutex
	version uint64         // the snapshot whose names were resolved
	names   map[string]int // snapshot netdev -> its ifindex, 0: not in the netns
	links   map[int]int    // ifindex of a link that concerned the inventory -> its lower (an upper device's NIC's), else 0
	applied []int          // the ifindexes last given to the source (sorted)
	awaited []string       // the names last given to it (sorted)
	extra   []string       // sysNetdevs not in the last snapshot (sorted)
	netdevs []string       // the last snapshot's netdevs (sorted)
	tried   bool           // applied was given
	filter  bool           // a filter is set (not too many links, no failure)
	added   []int          // ifindexes watched since the reader last took them (or whose state went unverified)
	failed  error          // the last failure to set the filter (every event is read then)
	// states are the last states the reader remembers of watched links
	// (see kstate.go); applied holds those last given.
	states        map[int]linkSeen
	appliedStates map[int]linkSeen
	// batched: the reader tells the end of each batch of events it read
	// (flushStates), and states learned within a batch are given to the
	// kernel then, not one program per event: a PF's VFs moving in and
	// out of pods change a state with every event. pending are those
	// states, checked against the kernel once given.
	batched bool
	pending map[int]linkSeen
	// vfNames are the VF netdevs the snapshots named: they get no state
	// (keepState).
	vfNames map[string]bool
	// stats and failedOnce: the filter's health, counted and logged
	// (Watch.FilterFailed) on its first failure.
	stats      *counters
	onFail     func(error)
	failedOnce bool

	// left are the upper devices the loop's last settleUppers found
	// gone (the loop's alone).
	left map[int]bool
}

func newKernelWatch(src kernelFiltered, parents bool, stats *counters, onFail func(error)) *kernelWatch {
	return &kernelWatch{src: src, parents: parents, names: map[string]int{}, links: map[int]int{},
		states: map[int]linkSeen{}, pending: map[int]linkSeen{}, vfNames: map[string]bool{}, stats: stats, onFail: onFail}
}

// saw takes in what one classified event teaches and applies the filter.
// The reader calls it for every event, before passing its concern on,
// and drops the concern when saw says so: the departure of an upper
// device no longer watched, which the loop found gone already (the event
// was on its way when the filter stopped watching it). remembered says
// that the reader's memory of the link now holds this event's name and
// state, and an event the same would ask for nothing: the filter drops
// those (see kstate.go).
func (k *kernelWatch) saw(ev LinkEvent, c concern, remembered bool) (keep bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	switch {
	case ev.Lost:
		k.version = 0 // the loop's full rescan resolves the names again
		clear(k.names)
		clear(k.states)
		clear(k.pending)
		return true
	case ev.Index <= 0:
		return true
	case ev.Gone:
		if _, watched := k.links[ev.Index]; !watched && k.filter {
			if _, upper := c.uppers[ev.Index]; upper {
				return false
			}
		}
		delete(k.links, ev.Index)
		delete(k.states, ev.Index)
		delete(k.pending, ev.Index)
		if k.names[ev.Name] == ev.Index {
			k.names[ev.Name] = 0
		}
	default:
		if _, named := k.names[ev.Name]; named {
			k.names[ev.Name] = ev.Index
		}
		if _, upper := c.uppers[ev.Index]; !upper && !c.none() {
			k.links[ev.Index] = 0
		} // an upper device is watched once the loop finds it stays (settleUppers)
		seen := linkSeen{name: ev.Name, state: ev.State}
		if last, known := k.states[ev.Index]; remembered && (known && last != seen || !known && k.keepState(ev.Index, seen)) {
			k.states[ev.Index] = seen
			if k.batched {
				k.pending[ev.Index] = seen
				k.install(false)
				return true
			}
			k.apply()
			k.verify(ev.Index, seen)
			return true
		} else if !remembered {
			delete(k.states, ev.Index)
			delete(k.pending, ev.Index)
		}
	}
	k.apply()
	return true
}

// verify asks the kernel for a link whose new state the filter was just
// given: an event of it between the change and the program's
// replacement was compared with its older state, and one changing it
// back was dropped. The read the change asks for comes after this, so the
// inventory sees the link as it is; but the reader's memory, and the
// filter, would hold a state the link no longer has, and drop its next
// change to it. When the link is not as seen, both forget it: its next
// event passes and is taken as a change. mu is held.
func (k *kernelWatch) verify(index int, seen linkSeen) {
	if !k.filter {
		return
	}
	now, there, err := k.src.link(index, "")
	if err == nil && there && (linkSeen{name: now.Name, state: now.State}) == seen {
		return
	}
	delete(k.states, index)
	k.added = append(k.added, index)
	k.apply()
}

// follow resolves the netdev names of a snapshot not resolved before and
// applies the filter: the names of those it watches from now on and did
// not before. The loop calls it after publishing; those links' events
// until now may have been dropped, so it reads their NICs again.
func (k *kernelWatch) follow(snap *Snapshot) []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	if snap.Version == k.version {
		return nil
	}
	k.version = snap.Version
	netdevs := snapshotNetdevs(snap)
	k.netdevs = netdevs
	k.readExtra()
	// kept across snapshots: a VF in a pod has no netdev in the snapshot
	for _, pf := range snap.Machine.PFs {
		for _, vf := range pf.VFs {
			if vf.Netdev != "" {
				k.vfNames[vf.Netdev] = true
			}
		}
	}
	for name := range k.names {
		if !slices.Contains(netdevs, name) {
			delete(k.names, name)
		}
	}
	for _, name := range netdevs {
		if _, known := k.names[name]; known {
			continue
		}
		ev, there, err := k.src.link(0, name)
		switch {
		case err != nil:
			continue // asked again at the next snapshot; the timer's rescan is the safety net
		case there:
			k.names[name] = ev.Index
			if _, known := k.states[ev.Index]; !known {
				// as it is now: a change since the snapshot was read
				// passed (no state was compared), and one before the
				// link was watched is read again (newly)
				k.keepState(ev.Index, linkSeen{name: ev.Name, state: ev.State})
			}
		default:
			k.names[name] = 0
		}
	}
	before := len(k.added)
	k.apply()
	var newly []string
	for name, index := range k.names {
		if index > 0 && slices.Contains(k.added[before:], index) {
			newly = append(newly, name)
		}
	}
	return newly
}

// readExtra reads which netdevs the fake machine's sysfs has that the
// last snapshot does not name. mu is held.
func (k *kernelWatch) readExtra() {
	if k.sysNetdevs == nil {
		return
	}
	k.extra = slices.DeleteFunc(k.sysNetdevs(), func(name string) bool {
		_, named := slices.BinarySearch(k.netdevs, name)
		return named
	})
}

// sysChanged takes in that the fake machine's sysfs gained netdevs: the
// filter passes their new links from now on. Those already in the netns
// came while it did not (their arrival may have been dropped): they are
// returned, for the loop to read the machine again.
func (k *kernelWatch) sysChanged() (present []string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	before := k.extra
	k.readExtra()
	k.apply()
	for _, name := range k.extra {
		if slices.Contains(before, name) {
			continue
		}
		if _, there, err := k.src.link(0, name); err != nil || there {
			present = append(present, name)
		}
	}
	return present
}

// upperLeft says whether an upper device seen arriving on the NIC of
// ifindex lower is gone from the netns (or sits on another link now): one
// not watched yet has its departure dropped. One that stays is watched
// from now on (its NIC is read after this), so its departure is read; a
// gone one is watched no more. An error counts as still there.
func (k *kernelWatch) upperLeft(index, lower int) bool {
	ev, there, err := k.src.link(index, "")
	stays := err != nil || (there && ev.Lower == lower)
	k.mu.Lock()
	defer k.mu.Unlock()
	if stays {
		k.links[index] = lower
	} else {
		delete(k.links, index)
	}
	k.apply()
	return !stays
}

// settleUppers marks the upper devices that c saw, and not leave, as left
// when they are gone now: the filter drops the departure of one it does
// not watch yet (set up and moved into a pod right after, or moved once
// down: the filter passes an upper device only when it is up), and it
// watches one only once it stayed past its burst, so another plugin's
// macvlans cost no program change. One seen changing (set up after it
// arrived down) is watched from then on as one seen arriving.
//
// Its departure may also have been on its way to the loop while it was
// asked after: the departure of an upper device the last call found gone
// asks for nothing.
func (k *kernelWatch) settleUppers(c *concern) {
	left := map[int]bool{}
	for index, u := range c.uppers {
		switch {
		case !u.cameFirst && u.goneNow && k.left[index]:
			delete(c.uppers, index)
		case !u.goneNow && k.upperLeft(index, u.lower):
			u.goneNow = true
			c.uppers[index] = u
			left[index] = true
		}
	}
	k.left = left
}

// takeAdded hands the reader the ifindexes watched since it last asked:
// their events may have been dropped until then, so what it remembers of
// their last state is no longer to be compared with.
func (k *kernelWatch) takeAdded() []int {
	k.mu.Lock()
	defer k.mu.Unlock()
	added := k.added
	k.added = nil
	return added
}

// apply sets the filter to the watched ifindexes if they changed. mu is
// held.
func (k *kernelWatch) apply() { k.install(true) }

// keepState records seen as index's state, unless it is a VF's netdev or
// maxStateLinks other links have states: false then (every event of
// index passes). A VF's events are those of its moves into pods and back
// (host-device, sriov-cni, rail's vf mode), each a real change: a state
// would cost a new program with each of them and drop none.
func (k *kernelWatch) keepState(index int, seen linkSeen) bool {
	if _, known := k.states[index]; !known && (len(k.states) >= maxStateLinks || k.vfNames[seen.name]) {
		return false
	}
	k.states[index] = seen
	return true
}

// flushStates ends a batch of events: the states learned in it go to the
// kernel in one program, and each is checked against the kernel's link
// (an event that changed a link back to what the program held was dropped
// before the program knew the change): a link that is not as its state
// says is forgotten by the reader and handed to handle as it is now, an
// event of its own, so the loop reads it. At most three rounds.
func (k *kernelWatch) flushStates(handle func(LinkEvent)) {
	for range 3 {
		now := k.givePending()
		if len(now) == 0 {
			return
		}
		for _, ev := range now {
			handle(ev)
		}
	}
}

// givePending installs the pending states and returns the links the
// kernel shows otherwise, as they are now.
func (k *kernelWatch) givePending() []LinkEvent {
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.pending) == 0 {
		return nil
	}
	k.install(true)
	var now []LinkEvent
	for index, seen := range k.pending {
		if !k.filter {
			break
		}
		ev, there, err := k.src.link(index, "")
		if err == nil && there && (linkSeen{name: ev.Name, state: ev.State}) == seen {
			continue
		}
		delete(k.states, index)
		k.added = append(k.added, index)
		if err == nil && there {
			now = append(now, ev)
		}
	}
	clear(k.pending)
	k.install(true)
	return now
}

// install gives the kernel the watched links, with the states the reader
// remembers (withStates) or, within a batch, those given last.
func (k *kernelWatch) install(withStates bool) {
	want := slices.Sorted(maps.Keys(k.links))
	var awaited []string
	for name, index := range k.names {
		if index > 0 {
			want = append(want, index)
		} else {
			awaited = append(awaited, name)
		}
	}
	slices.Sort(want)
	want = slices.Compact(want)
	awaited = append(awaited, k.extra...)
	slices.Sort(awaited)
	awaited = slices.Compact(awaited)
	for index := range k.states {
		if _, watched := slices.BinarySearch(want, index); !watched {
			delete(k.states, index)
			delete(k.pending, index)
		}
	}
	states := k.states
	if !withStates {
		states = maps.Clone(k.appliedStates)
		maps.DeleteFunc(states, func(index int, _ linkSeen) bool { _, kept := k.states[index]; return !kept })
	}
	if k.tried && slices.Equal(want, k.applied) && slices.Equal(awaited, k.awaited) && maps.Equal(states, k.appliedStates) {
		return // as it is (or, too many or failing, as it was)
	}
	filter, err := k.src.watch(watchList{indexes: want, names: awaited, parents: k.parents, byName: k.sysNetdevs != nil,
		states: maps.Clone(states)})
	k.failed = err
	k.health(filter, err)
	if k.filter { // without a filter before, nothing was dropped
		for _, index := range want {
			if _, had := slices.BinarySearch(k.applied, index); !had {
				k.added = append(k.added, index)
			}
		}
	}
	k.applied, k.awaited, k.tried, k.filter = want, awaited, true, filter
	k.appliedStates = maps.Clone(states)
}

// health counts whether a filter is set, and a failure to set one,
// reported once: every event is read then, as without a filter.
func (k *kernelWatch) health(filter bool, err error) {
	k.stats.linkFilter.Store(filter)
	if err == nil {
		return
	}
	k.stats.filterFailures.Add(1)
	if !k.failedOnce && k.onFail != nil {
		k.failedOnce = true
		k.onFail(err)
	}
}

// netdevsConcern is what reads the NICs and VFs of these netdev names
// again.
func netdevsConcern(snap *Snapshot, names []string) concern {
	c := concern{first: strings.Join(names, ","), events: len(names)}
	for _, nic := range snap.Machine.NICs {
		if slices.Contains(names, nic.Netdev) || slices.ContainsFunc(nic.Ports, func(p topology.Port) bool {
			return slices.ContainsFunc(p.Netdevs, func(n string) bool { return slices.Contains(names, n) })
		}) {
			c.devices = append(c.devices, nicDevice(nic))
		}
	}
	for _, pf := range snap.Machine.PFs {
		for _, vf := range pf.VFs {
			if vf.Netdev != "" && slices.Contains(names, vf.Netdev) {
				if c.vfs == nil {
					c.vfs = map[string][]string{}
				}
				c.vfs[pf.PCI] = append(c.vfs[pf.PCI], vf.PCI)
			}
		}
	}
	return c
}

// snapshotNetdevs are the netdev names of a snapshot's NICs (their host
// names, for those in pods) and of its VFs.
func snapshotNetdevs(snap *Snapshot) []string {
	var names []string
	for _, nic := range snap.Machine.NICs {
		if nic.Netdev != "" {
			names = append(names, nic.Netdev)
		}
		for _, p := range nic.Ports {
			names = append(names, p.Netdevs...)
		}
	}
	for _, pf := range snap.Machine.PFs {
		for _, vf := range pf.VFs {
			if vf.Netdev != "" {
				names = append(names, vf.Netdev)
			}
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}
