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
