package linkfilter

import (
	"sync"
	"testing"
)

// offering is a Source that counts the programs offered and answers link
// lookups from its table.
type offering struct {
	mu     sync.Mutex
	offers int
	links  map[string]Link
}

func (o *offering) Watch(List) (bool, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.offers++
	return true, nil
}

func (o *offering) Link(index int, name string) (Link, bool, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for n, l := range o.links {
		if n == name || (index > 0 && l.Index == index) {
			return l, true, nil
		}
	}
	return Link{}, false, nil
}

// TestWatchBatchesStates: within a batch of events, a watched NIC's new
// states cost no program each; the batch's end gives them in one and
// checks them against the kernel, handing on as an event of its own a
// link the kernel shows otherwise. A VF's netdev (moved into pods and
// back by other plugins) gets no state, so its events cost no program.
func TestWatchBatchesStates(t *testing.T) {
	nic := Link{Index: 7, Seen: Seen{Name: "ens1", State: State{Flags: FollowedFlags, MTU: 1500}}}
	src := &offering{links: map[string]Link{"ens1": nic}}
	k := New(src, true, nil)
	k.Batched()
	k.Follow(1, []string{"ens1", "ens2"}, []string{"ens2"})
	base := src.offers

	watched := func(l Link) Event { return Event{Link: l, Concerns: true, Remembered: true} }
	for mtu := 1501; mtu <= 1505; mtu++ {
		l := nic
		l.State.MTU = mtu
		k.Saw(watched(l))
	}
	if got := src.offers - base; got != 0 {
		t.Fatalf("%d programs within the batch, want none before its end", got)
	}
	var handed []Link
	src.links["ens1"] = Link{Index: 7, Seen: Seen{Name: "ens1", State: State{Flags: FollowedFlags, MTU: 1505}}}
	k.FlushStates(func(l Link) { handed = append(handed, l) })
	if got := src.offers - base; got != 1 || len(handed) != 0 {
		t.Fatalf("batch end: %d programs, handed %v; want one program and nothing handed (the kernel agrees)", got, handed)
	}

	// the kernel shows the NIC otherwise than its last event (a change
	// back that the program in place dropped): handed on as it is now
	l := nic
	l.State.MTU = 9000
	k.Saw(watched(l))
	src.links["ens1"] = nic
	k.FlushStates(func(l Link) { handed = append(handed, l) })
	if len(handed) != 1 || handed[0] != nic {
		t.Fatalf("handed %v, want the NIC as the kernel shows it: %v", handed, nic)
	}

	// ens2, a VF's netdev (moved by another plugin's pods): watched, no state
	before := src.offers
	arrived := Link{Index: 9, Seen: Seen{Name: "ens2", State: State{Flags: FollowedFlags, MTU: 1500}}}
	k.Saw(watched(arrived))
	afterArrival := src.offers
	for mtu := 1501; mtu <= 1503; mtu++ {
		l := arrived
		l.State.MTU = mtu
		k.Saw(watched(l))
		k.FlushStates(func(Link) {})
	}
	if _, has := k.states[9]; has || src.offers != afterArrival || afterArrival != before+1 {
		t.Fatalf("the link that arrived: state %v, programs %d → %d → %d; want no state, one program for its arrival, none for its changes",
			k.states[9], before, afterArrival, src.offers)
	}
}

// TestWatchKeepsAMovedNIC: a snapshot's NIC netdev moved into a pod
// (RTM_DELLINK naming the netns it went to) and back with its ifindex,
// set up again as it was, changes no program where new links with a
// parent device pass anyway; its return and set-up pass (a new link's
// event; its state learned again). Deleted, or on a machine whose new
// links pass only by name, it is watched no more, and its name awaited.
func TestWatchKeepsAMovedNIC(t *testing.T) {
	up := Link{Index: 7, Seen: Seen{Name: "ens1", State: State{Flags: FollowedFlags, MTU: 1500}}}
	down := up
	down.State.Flags = 0
	for _, tc := range []struct {
		name     string
		parents  bool
		moved    bool
		programs int // offered for the move out, back, and set up
	}{
		{name: "moved, parents pass", parents: true, moved: true, programs: 0},
		{name: "deleted", parents: true, moved: false, programs: 3},
		{name: "moved, names only", parents: false, moved: true, programs: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := &offering{links: map[string]Link{"ens1": up}}
			k := New(src, tc.parents, nil)
			k.Batched()
			k.Follow(1, []string{"ens1"}, nil)
			k.Saw(Event{Link: up, Concerns: true, Remembered: true})
			k.FlushStates(func(Link) {})
			base := src.offers

			k.Saw(Event{Link: up, Gone: true, Moved: tc.moved, Concerns: true})
			k.FlushStates(func(Link) {})
			_, watched := k.links[7]
			if tc.programs == 0 && (!watched || k.names["ens1"] != 7) {
				t.Fatalf("moved out: watched %v, name -> %d; want ifindex 7 watched on", watched, k.names["ens1"])
			}
			if tc.programs > 0 && (watched || k.names["ens1"] != 0) {
				t.Fatalf("gone: watched %v, name -> %d; want it awaited by name", watched, k.names["ens1"])
			}
			src.links["ens1"] = down
			k.Saw(Event{Link: down, Concerns: true, Remembered: true}) // back, down
			src.links["ens1"] = up
			k.Saw(Event{Link: up, Concerns: true, Remembered: true}) // set up
			k.FlushStates(func(Link) {})
			if got := src.offers - base; got != tc.programs {
				t.Errorf("%d programs for the move, want %d", got, tc.programs)
			}
			if k.states[7] != up.Seen {
				t.Errorf("state after the move %+v, want %+v", k.states[7], up.Seen)
			}
		})
	}
}
