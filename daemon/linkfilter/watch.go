package linkfilter

import (
	"maps"
	"slices"
	"sync"
)

// Source is a link-event socket whose events the kernel can filter
// (the inventory's NetlinkLinks): the watch says which links it passes,
// and asks after a link whose departure the filter may have dropped.
type Source interface {
	// Watch has the kernel pass only what l says (Program); with too
	// many links for a filter, every event. It says whether a filter is
	// set.
	Watch(l List) (bool, error)
	// Link asks the kernel for a link of the netns by ifindex or, index
	// 0, by name: false when there is none.
	Link(index int, name string) (Link, bool, error)
}

// Link is a link as the kernel shows it: what the watch compares and
// follows of it.
type Link struct {
	Index int // its ifindex
	Lower int // the link it sits on in the same netns (IFLA_LINK), 0 for none
	Seen
}

// Event is what one classified link event teaches the watch.
type Event struct {
	Link
	Gone bool // deleted or moved out (RTM_DELLINK)
	// Moved: a Gone link left for another netns (the kernel named the
	// netns it went to); it may come back.
	Moved bool
	Lost  bool // events were lost: what changed is unknown
	// Upper: the inventory took the link for an upper device of a
	// watched NIC's (watched once it stays past its burst: UpperLeft).
	Upper bool
	// Concerns: the event asked something of the inventory.
	Concerns bool
	// Remembered: the reader's memory of the link now holds this
	// event's name and state, and an event the same would ask for
	// nothing: the filter drops those (see state.go).
	Remembered bool
}

// Watch keeps the kernel filter of a Source on the links the inventory
// follows: the netdevs of the current snapshot's NICs and VFs (their
// names resolved to ifindexes in the source's netns), and every link
// whose event concerned the inventory (a NIC's or VF's netdev that came,
// a new NIC-like link, an upper device of one that stayed past its
// burst), until it goes.
//
// The reader changes it as it classifies, and replaces the program before
// the event's concern reaches the loop, so whatever the kernel dropped
// before the link was watched the loop's read sees; the loop changes it
// after publishing a snapshot (new names) and when it finds that an upper
// device left unseen.
type Watch struct {
	src Source
	// parents: a new link without a parent device is no NIC (the sysfs
	// read is the kernel's own, and the kernel names parent devices).
	parents bool
	// sysNetdevs, on a machine whose sysfs is not the kernel's (a fake
	// one: nil on the kernel's own), lists the netdevs that sysfs could
	// take for NICs'; a new link then passes only when named (ByName in
	// program.go): a snapshot's netdev not in the netns, or one of these
	// that no snapshot names (extra, read at each snapshot).
	sysNetdevs func() []string

	mu      sync.Mutex
	version uint64         // the snapshot whose names were resolved
	names   map[string]int // snapshot netdev -> its ifindex, 0: not in the netns
	links   map[int]int    // ifindex of a link that concerned the inventory -> its lower (an upper device's NIC's), else 0
	applied []int          // the ifindexes last given to the source (sorted)
	awaited []string       // the names last given to it (sorted)
	extra   []string       // sysNetdevs not in the last snapshot (sorted)
	netdevs []string       // the last snapshot's netdevs
	tried   bool           // applied was given
	filter  bool           // a filter is set (not too many links, no failure)
	added   []int          // ifindexes watched since the reader last took them (or whose state went unverified)
	// states are the last states the reader remembers of watched links
	// (see state.go); applied holds those last given.
	states        map[int]Seen
	appliedStates map[int]Seen
	// batched: the reader tells the end of each batch of events it read
	// (FlushStates), and states learned within a batch are given to the
	// kernel then, not one program per event: a PF's VFs moving in and
	// out of pods change a state with every event. pending are those
	// states, checked against the kernel once given.
	batched bool
	pending map[int]Seen
	// vfNames are the VF netdevs the snapshots named: they get no state
	// (keepState).
	vfNames map[string]bool
	// health gets, after each try to set the filter, whether one is set
	// and the source's error.
	health func(set bool, err error)
}

// New is a watch of src; health (if set) hears of every try to set the
// filter.
func New(src Source, parents bool, health func(set bool, err error)) *Watch {
	if health == nil {
		health = func(bool, error) {}
	}
	return &Watch{src: src, parents: parents, names: map[string]int{}, links: map[int]int{},
		states: map[int]Seen{}, pending: map[int]Seen{}, vfNames: map[string]bool{}, health: health}
}

// Batched says that the reader ends each batch of events it read with
// FlushStates. Call it before the first event.
func (k *Watch) Batched() { k.batched = true }

// ByName has the filter pass a new link only when named, on a machine
// whose sysfs is not the kernel's (a fake one): netdevs lists the netdevs
// that sysfs could take for NICs' (those with a `device`). Set it before
// the watch is used.
func (k *Watch) ByName(netdevs func() []string) { k.sysNetdevs = netdevs }

// Saw takes in what one classified event teaches and applies the filter.
// The reader calls it for every event, before passing its concern on,
// and drops the concern when Saw says so: the departure of an upper
// device no longer watched, which the loop found gone already (the event
// was on its way when the filter stopped watching it).
func (k *Watch) Saw(ev Event) (keep bool) {
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
		if _, watched := k.links[ev.Index]; !watched && k.filter && ev.Upper {
			return false
		}
		if ev.Moved && k.parents && k.names[ev.Name] == ev.Index {
			// A snapshot's netdev moved into a pod: it comes back with
			// its ifindex (the kernel keeps it when it is free), or
			// with its parent device, which passes anyway. Watched on,
			// with its state (its return is a new link's event, which
			// passes, and its state is learned again from it), the move
			// changes no program.
			delete(k.pending, ev.Index)
			return true
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
		if !ev.Upper && ev.Concerns {
			k.links[ev.Index] = 0
		} // an upper device is watched once the loop finds it stays (UpperLeft)
		seen := ev.Seen
		if last, known := k.states[ev.Index]; ev.Remembered && (known && last != seen || !known && k.keepState(ev.Index, seen)) {
			k.states[ev.Index] = seen
			if k.batched {
				k.pending[ev.Index] = seen
				k.install(false)
				return true
			}
			k.apply()
			k.verify(ev.Index, seen)
			return true
		} else if !ev.Remembered {
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
func (k *Watch) verify(index int, seen Seen) {
	if !k.filter {
		return
	}
	now, there, err := k.src.Link(index, "")
	if err == nil && there && (now.Seen) == seen {
		return
	}
	delete(k.states, index)
	k.added = append(k.added, index)
	k.apply()
}

// Follow resolves the netdev names of a snapshot (its version, its NICs'
// and VFs' netdevs, and among them the VFs') not resolved before and
// applies the filter: the names of those it watches from now on and did
// not before. The loop calls it after publishing; those links' events
// until now may have been dropped, so it reads their NICs again.
func (k *Watch) Follow(version uint64, netdevs, vfNetdevs []string) []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	if version == k.version {
		return nil
	}
	k.version = version
	k.netdevs = slices.Clone(netdevs)
	k.readExtra()
	// kept across snapshots: a VF in a pod has no netdev in the snapshot
	for _, name := range vfNetdevs {
		k.vfNames[name] = true
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
		ev, there, err := k.src.Link(0, name)
		switch {
		case err != nil:
			continue // asked again at the next snapshot; the timer's rescan is the safety net
		case there:
			k.names[name] = ev.Index
			if _, known := k.states[ev.Index]; !known {
				// as it is now: a change since the snapshot was read
				// passed (no state was compared), and one before the
				// link was watched is read again (newly)
				k.keepState(ev.Index, ev.Seen)
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
func (k *Watch) readExtra() {
	if k.sysNetdevs == nil {
		return
	}
	k.extra = slices.DeleteFunc(k.sysNetdevs(), func(name string) bool { return slices.Contains(k.netdevs, name) })
}

// SysChanged takes in that the fake machine's sysfs gained netdevs (see
// ByName): the filter passes their new links from now on. Those already
// in the netns came while it did not (their arrival may have been
// dropped): they are returned, for the loop to read the machine again.
func (k *Watch) SysChanged() (present []string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	before := k.extra
	k.readExtra()
	k.apply()
	for _, name := range k.extra {
		if slices.Contains(before, name) {
			continue
		}
		if _, there, err := k.src.Link(0, name); err != nil || there {
			present = append(present, name)
		}
	}
	return present
}

// UpperLeft says whether an upper device seen arriving on the NIC of
// ifindex lower is gone from the netns (or sits on another link now): one
// not watched yet has its departure dropped. One that stays is watched
// from now on (its NIC is read after this), so its departure is read; a
// gone one is watched no more. An error counts as still there.
func (k *Watch) UpperLeft(index, lower int) bool {
	ev, there, err := k.src.Link(index, "")
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

// TakeAdded hands the reader the ifindexes watched since it last asked:
// their events may have been dropped until then, so what it remembers of
// their last state is no longer to be compared with.
func (k *Watch) TakeAdded() []int {
	k.mu.Lock()
	defer k.mu.Unlock()
	added := k.added
	k.added = nil
	return added
}

// apply sets the filter to the watched ifindexes if they changed. mu is
// held.
func (k *Watch) apply() { k.install(true) }

// keepState records seen as index's state, unless it is a VF's netdev or
// maxStateLinks other links have states: false then (every event of
// index passes). A VF's events are those of its moves into pods and back
// (host-device, sriov-cni, rail's vf mode), each a real change: a state
// would cost a new program with each of them and drop none.
func (k *Watch) keepState(index int, seen Seen) bool {
	if _, known := k.states[index]; !known && (len(k.states) >= maxStateLinks || k.vfNames[seen.Name]) {
		return false
	}
	k.states[index] = seen
	return true
}

// FlushStates ends a batch of events: the states learned in it go to the
// kernel in one program, and each is checked against the kernel's link
// (an event that changed a link back to what the program held was dropped
// before the program knew the change): a link that is not as its state
// says is forgotten by the reader and handed to handle as it is now, an
// event of its own, so the loop reads it. At most three rounds.
func (k *Watch) FlushStates(handle func(Link)) {
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
func (k *Watch) givePending() []Link {
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.pending) == 0 {
		return nil
	}
	k.install(true)
	var now []Link
	for index, seen := range k.pending {
		if !k.filter {
			break
		}
		ev, there, err := k.src.Link(index, "")
		if err == nil && there && (ev.Seen) == seen {
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
func (k *Watch) install(withStates bool) {
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
		maps.DeleteFunc(states, func(index int, _ Seen) bool { _, kept := k.states[index]; return !kept })
	}
	if k.tried && slices.Equal(want, k.applied) && slices.Equal(awaited, k.awaited) && maps.Equal(states, k.appliedStates) {
		return // as it is (or, too many or failing, as it was)
	}
	filter, err := k.src.Watch(List{Indexes: want, Names: awaited, Parents: k.parents, ByName: k.sysNetdevs != nil,
		States: maps.Clone(states)})
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
