package inventory

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/railcni/rail/daemon/linkfilter"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

// refusing is a link-event source whose socket refuses every filter (as
// one would past the socket option memory, or on a kernel without
// classic BPF on netlink): it hands on the events of its channel.
type refusing struct {
	Chan
	mu     sync.Mutex
	offers int
}

func (r *refusing) Watch(linkfilter.List) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.offers++
	return false, errors.New("setsockopt SO_ATTACH_FILTER: cannot allocate memory")
}

func (r *refusing) Link(int, string) (linkfilter.Link, bool, error) {
	return linkfilter.Link{}, false, nil
}

// TestFilterRefusedIsTold: a socket that refuses the kernel filter is
// told once (Watch.FilterFailed) however often the filter is offered
// again, counted (Stats.LinkFilterFailures, LinkFilter false), and every
// event is still read: each MTU change of the NIC's netdev reads it.
func TestFilterRefusedIsTold(t *testing.T) {
	root, _ := fakeNode(t, fakesys.Options{Netdevs: map[string]string{"mlx5_0": "ens1f0np0"}})
	inv, err := New(root, nil, nil)
	must(t, err)
	events := make(chan LinkEvent)
	src := &refusing{Chan: events}
	var mu sync.Mutex
	var told []error
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		inv.Run(ctx, Watch{Events: src, FilterFailed: func(err error) {
			mu.Lock()
			defer mu.Unlock()
			told = append(told, err)
		}})
	}()
	t.Cleanup(func() { cancel(); <-done })

	const changes = 4
	for i := range changes {
		reads := inv.Stats().nicReads()
		// a new ifindex each time (the netdev re-created): a new watched set, offered again
		events <- LinkEvent{Name: "ens1f0np0", Index: 5 + i, State: linkfilter.State{Flags: linkfilter.FollowedFlags, MTU: 1500 + i}}
		deadline := time.Now().Add(20 * time.Second) // a hang guard, not a speed claim
		for inv.Stats().nicReads() == reads {
			if time.Now().After(deadline) {
				t.Fatalf("change %d: the NIC was not read: %+v", i, inv.Stats())
			}
			time.Sleep(time.Millisecond)
		}
	}
	st := inv.Stats()
	src.mu.Lock()
	offers := src.offers
	src.mu.Unlock()
	mu.Lock()
	defer mu.Unlock()
	if len(told) != 1 || st.LinkFilter || st.LinkFilterFailures != uint64(offers) || offers < changes {
		t.Errorf("filter offered %d times: told %d times (%v), stats say set %v, %d failures; want at least %d offers, told once, not set, each counted",
			offers, len(told), told, st.LinkFilter, st.LinkFilterFailures, changes)
	}
}
