package inventory

import (
	"context"
	"fmt"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

// Watch says what triggers a rescan.
type Watch struct {
	// Interval is the periodic rescan (0: none).
	Interval time.Duration
	// Events are link changes (LinkEvents); each burst causes one rescan.
	Events <-chan string
	// Settle is how long a burst of events may last before the rescan
	// (a NIC moving into a pod changes several attributes at once).
	Settle time.Duration
	// FollowUp, when set, rescans once more this long after an event's
	// rescan when no other event came: what trails a link event without
	// one of its own (an RDMA device returning to the host netns after its
	// netdev, its char devices registered again) is then seen in seconds,
	// not at the next timer.
	FollowUp time.Duration
	// Published, if set, gets every snapshot after it is published.
	Published func(*Snapshot)
	// Failed, if set, gets every rescan error (the last snapshot stays).
	Failed func(error)
}

// Run rescans on events and on the timer until ctx ends.
func (inv *Inventory) Run(ctx context.Context, w Watch) {
	var tick <-chan time.Time
	if w.Interval > 0 {
		t := time.NewTicker(w.Interval)
		defer t.Stop()
		tick = t.C
	}
	events := w.Events
	var followUp <-chan time.Time
	for {
		var cause string
		select {
		case <-ctx.Done():
			return
		case <-tick:
			cause = "rescan timer"
		case <-followUp:
			cause, followUp = "follow-up of a link event", nil
		case link, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			cause = "link event " + link + inv.settle(ctx, events, w.Settle)
			if w.FollowUp > 0 {
				followUp = time.After(w.FollowUp)
			}
		}
		inv.publish(cause, w)
	}
}

// settle drains the rest of a burst of events, for at most d.
func (inv *Inventory) settle(ctx context.Context, events <-chan string, d time.Duration) string {
	if d <= 0 {
		return ""
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	more := 0
	for {
		select {
		case <-ctx.Done():
			return ""
		case <-timer.C:
			if more == 0 {
				return ""
			}
			return fmt.Sprintf(" (+%d)", more)
		case _, ok := <-events:
			if !ok {
				return ""
			}
			more++
		}
	}
}

func (inv *Inventory) publish(cause string, w Watch) {
	snap, err := inv.Rescan(cause)
	switch {
	case err != nil && w.Failed != nil:
		w.Failed(err)
	case err == nil && w.Published != nil:
		w.Published(snap)
	}
}

// LinkEvents subscribes to link changes (state, rename, add, remove, moves
// out of the netns) in the netns ns (netns.None(): the caller's, the host
// netns for raild). Each event gives the link's name; the channel closes
// when ctx ends or the subscription fails.
func LinkEvents(ctx context.Context, ns netns.NsHandle) (<-chan string, error) {
	updates := make(chan netlink.LinkUpdate, 64)
	opts := netlink.LinkSubscribeOptions{ListExisting: false}
	if ns.IsOpen() {
		opts.Namespace = &ns
	}
	done := make(chan struct{})
	if err := netlink.LinkSubscribeWithOptions(updates, done, opts); err != nil {
		close(done)
		return nil, fmt.Errorf("subscribe to link events: %w", err)
	}
	names := make(chan string, 64)
	go func() {
		defer close(names)
		defer func() {
			close(done)
			for range updates { // netlink closes it once its socket is shut
			}
		}()
		for {
			select {
			case <-ctx.Done():
				return
			case u, ok := <-updates:
				if !ok {
					return
				}
				select {
				case names <- u.Attrs().Name:
				default: // a rescan is pending anyway
				}
			}
		}
	}()
	return names, nil
}
