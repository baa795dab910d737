package inventory

import (
	"context"
	"fmt"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// LinkEvent is one link change in the watched netns.
type LinkEvent struct {
	Name  string // the link's name now
	Index int    // its ifindex in the netns (0: not known)
	Gone  bool   // deleted, or moved to another netns (RTM_DELLINK)
	// State is the link's attributes that a NIC's record follows.
	State LinkState
	// Lower is the link this one sits on in the same netns (a macvlan's
	// or VLAN's parent), 0 for none: such an upper device on a NIC makes
	// it the node's own.
	Lower int
	// Lost says that events were lost (the subscription's socket
	// overflowed and it was made again): what changed is unknown.
	Lost bool
}

// LinkState is what a NIC's record can follow among a link's attributes:
// its flags (up, running), operational state, MTU, master (bond,
// bridge), address and alias. An event of a NIC's netdev that changes
// none of them (the kernel sends one when an upper device such as
// someone's macvlan is added on it or removed, and for counters) asks for
// no read; the timer's rescan sees what it may have changed.
type LinkState struct {
	Flags     uint32
	OperState uint8
	MTU       int
	Master    int
	MAC       string
	Alias     string
}

// stateOf reads a link's LinkState.
func stateOf(a *netlink.LinkAttrs) LinkState {
	return LinkState{Flags: a.RawFlags, OperState: uint8(a.OperState), MTU: a.MTU, Master: a.MasterIndex,
		MAC: string(a.HardwareAddr), Alias: a.Alias}
}

// eventBuffer is how many link events may wait for the inventory; the
// subscription's socket holds more (subscribeBuffer) before any is lost.
const (
	eventBuffer     = 256
	subscribeBuffer = 4 << 20
	resubscribeWait = time.Second
)

// LinkEvents subscribes to link changes (state, rename, add, remove, moves
// out of the netns) in the netns ns (netns.None(): the caller's, the host
// netns for raild). When the subscription fails (its socket overflowed),
// it is made again and a Lost event says so. The channel closes when ctx
// ends; the error is for a subscription that cannot be made at all.
func LinkEvents(ctx context.Context, ns netns.NsHandle) (<-chan LinkEvent, error) {
	updates, done, err := subscribe(ns)
	if err != nil {
		return nil, err
	}
	events := make(chan LinkEvent, eventBuffer)
	go func() {
		defer close(events)
		for {
			forward(ctx, updates, events)
			close(done)
			for range updates { // netlink closes it once its socket is shut
			}
			if ctx.Err() != nil {
				return
			}
			if updates, done = resubscribe(ctx, ns); updates == nil {
				return
			}
			select {
			case events <- LinkEvent{Lost: true}:
			case <-ctx.Done():
			}
		}
	}()
	return events, nil
}

// subscribe opens a link subscription in ns with a large socket buffer
// (the default one, when the netns does not allow forcing it).
func subscribe(ns netns.NsHandle) (chan netlink.LinkUpdate, chan struct{}, error) {
	var err error
	for _, size := range []int{subscribeBuffer, 0} {
		updates, done := make(chan netlink.LinkUpdate, eventBuffer), make(chan struct{})
		opts := netlink.LinkSubscribeOptions{ReceiveBufferSize: size, ReceiveBufferForceSize: size > 0}
		if ns.IsOpen() {
			opts.Namespace = &ns
		}
		if err = netlink.LinkSubscribeWithOptions(updates, done, opts); err == nil {
			return updates, done, nil
		}
		close(done)
	}
	return nil, nil, fmt.Errorf("subscribe to link events: %w", err)
}

// resubscribe makes the subscription again, retrying until ctx ends.
func resubscribe(ctx context.Context, ns netns.NsHandle) (chan netlink.LinkUpdate, chan struct{}) {
	for {
		select {
		case <-ctx.Done():
			return nil, nil
		case <-time.After(resubscribeWait):
		}
		if updates, done, err := subscribe(ns); err == nil {
			return updates, done
		}
	}
}

// forward passes each update on until the subscription ends or ctx does.
func forward(ctx context.Context, updates <-chan netlink.LinkUpdate, events chan<- LinkEvent) {
	for {
		select {
		case <-ctx.Done():
			return
		case u, ok := <-updates:
			if !ok {
				return
			}
			a := u.Attrs()
			ev := LinkEvent{Name: a.Name, Index: int(u.Index), Gone: u.Header.Type == unix.RTM_DELLINK, State: stateOf(a)}
			if a.NetNsID < 0 && a.ParentIndex != ev.Index {
				ev.Lower = a.ParentIndex // a parent in another netns (a veth's peer) is no lower of this one's
			}
			select {
			case events <- ev:
			case <-ctx.Done():
				return
			}
		}
	}
}
