package inventory

import (
	"sync"
	"testing"

	"github.com/railcni/rail/pkg/topology"
)

// offering is a kernelFiltered that counts the programs offered and
// answers link lookups from its table.
type offering struct {
	mu     sync.Mutex
	offers int
	links  map[string]LinkEvent
}

func (o *offering) watch(watchList) (bool, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.offers++
	return true, nil
}

func (o *offering) link(index int, name string) (LinkEvent, bool, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for n, ev := range o.links {
		if n == name || (index > 0 && ev.Index == index) {
			return ev, true, nil
		}
	}
	return LinkEvent{}, false, nil
}

// TestKernelWatchBatchesStates: within a batch of events, a watched NIC's
// new states cost no program each; the batch's end gives them in one and
// checks them against the kernel, handing on as an event of its own a
// link the kernel shows otherwise. A VF's netdev (moved into pods and
// back by other plugins) gets no state, so its events cost no program.
func TestKernelWatchBatchesStates(t *testing.T) {
	nic := LinkEvent{Name: "ens1", Index: 7, State: LinkState{Flags: followedFlags, MTU: 1500}}
	src := &offering{links: map[string]LinkEvent{"ens1": nic}}
	k := newKernelWatch(src, true, &counters{}, nil)
	k.batched = true
	snap := &Snapshot{Version: 1, Machine: &topology.Machine{NICs: []topology.NIC{{Name: "mlx5_0", Netdev: "ens1"}, {Name: "mlx5_1", Netdev: "ens2"}},
		PFs: []topology.PF{{PCI: "0000:01:00.0", Netdev: "ens1", VFs: []topology.VF{{Index: 0, PCI: "0000:01:00.1", Netdev: "ens2"}}}}}}
	k.follow(snap)
	base := src.offers

	watched := concern{devices: []string{"mlx5_0"}, first: "ens1", events: 1}
	for mtu := 1501; mtu <= 1505; mtu++ {
		ev := nic
		ev.State.MTU = mtu
		k.saw(ev, watched, true)
	}
	if got := src.offers - base; got != 0 {
		t.Fatalf("%d programs within the batch, want none before its end", got)
	}
	var handed []LinkEvent
	src.links["ens1"] = LinkEvent{Name: "ens1", Index: 7, State: LinkState{Flags: followedFlags, MTU: 1505}}
	k.flushStates(func(ev LinkEvent) { handed = append(handed, ev) })
	if got := src.offers - base; got != 1 || len(handed) != 0 {
		t.Fatalf("batch end: %d programs, handed %v; want one program and nothing handed (the kernel agrees)", got, handed)
	}

	// the kernel shows the NIC otherwise than its last event (a change
	// back that the program in place dropped): handed on as it is now
	ev := nic
	ev.State.MTU = 9000
	k.saw(ev, watched, true)
	src.links["ens1"] = nic
	k.flushStates(func(ev LinkEvent) { handed = append(handed, ev) })
	if len(handed) != 1 || handed[0] != nic {
		t.Fatalf("handed %v, want the NIC as the kernel shows it: %v", handed, nic)
	}

	// ens2, a VF's netdev (moved by another plugin's pods): watched, no state
	before := src.offers
	arrived := LinkEvent{Name: "ens2", Index: 9, New: true, State: LinkState{Flags: followedFlags, MTU: 1500}}
	k.saw(arrived, concern{devices: []string{"mlx5_1"}, first: "ens2", events: 1}, true)
	afterArrival := src.offers
	for mtu := 1501; mtu <= 1503; mtu++ {
		ev := arrived
		ev.New, ev.State.MTU = false, mtu
		k.saw(ev, concern{devices: []string{"mlx5_1"}, first: "ens2", events: 1}, true)
		k.flushStates(func(LinkEvent) {})
	}
	if _, has := k.states[9]; has || src.offers != afterArrival || afterArrival != before+1 {
		t.Fatalf("the link that arrived: state %v, programs %d → %d → %d; want no state, one program for its arrival, none for its changes",
			k.states[9], before, afterArrival, src.offers)
	}
}
