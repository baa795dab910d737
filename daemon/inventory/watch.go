package inventory

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/railcni/rail/daemon/linkfilter"
)

// Watch says what triggers a rescan.
type Watch struct {
	// Interval is the periodic rescan of the whole node (0: none): the
	// safety net for what no link event tells.
	Interval time.Duration
	// Events are link changes (LinkEvents, or any LinkSource). Each is
	// classified in the source's own goroutine as it is read: only those about a NIC's netdev, an upper device on one, or a
	// new link that could be a NIC's reach the loop, and cause a read of
	// the RDMA devices concerned, not of the whole node; a burst of them
	// causes one.
	Events LinkSource
	// Settle is how long a burst of events may last before the read
	// (a NIC moving into a pod changes several attributes at once).
	Settle time.Duration
	// FollowUp, when set, reads the same devices once more this long
	// after an event's read when no other event came: what trails a link
	// event without one of its own (an RDMA device returning to the host
	// netns after its netdev, its char devices registered again) is then
	// seen in seconds, not at the next timer.
	FollowUp time.Duration
	// Published, if set, gets every snapshot after it is published.
	Published func(*Snapshot)
	// Failed, if set, gets every rescan error (the last snapshot stays).
	Failed func(error)
	// FilterFailed, if set, gets the first failure to set the kernel
	// filter on the Events socket: every link event is read from then on
	// (Stats.LinkFilter says whether one is set).
	FilterFailed func(error)
}

// concernBuffer is how many classified events may wait for the loop.
const concernBuffer = 256

// Run rescans on events and on the timer until ctx ends.
func (inv *Inventory) Run(ctx context.Context, w Watch) {
	var tick <-chan time.Time
	if w.Interval > 0 {
		t := time.NewTicker(w.Interval)
		defer t.Stop()
		tick = t.C
	}
	var kernel *linkfilter.Watch
	if src, ok := w.Events.(linkfilter.Source); ok {
		kernel = newKernelWatch(src, inv.linksDescribed && kernelNamesParents(), &inv.stats, w.FilterFailed)
	}
	var fakeNet *fakeNetWatch
	if kernel != nil && !inv.linksDescribed {
		// a fake machine: its NICs are those its sysfs names
		var err error
		if fakeNet, err = watchFakeNet(ctx, inv.root); err != nil && w.FilterFailed != nil {
			w.FilterFailed(fmt.Errorf("every new link is read: %w", err))
		}
		if err == nil {
			kernel.ByName(inv.sys.DeviceNetdevs)
		}
	}
	uppers := upperSettler{k: kernel}
	// watched has the kernel filter follow a new snapshot's netdevs; the
	// events of one it did not watch until now may have been dropped, so
	// its NIC or VF is read again.
	watched := func() {
		if kernel == nil {
			return
		}
		if names := followSnapshot(kernel, inv.Current()); len(names) > 0 {
			c := netdevsConcern(inv.Current(), names)
			inv.read("links newly watched: "+c.first, concern{devices: c.devices, vfs: c.vfs}, w)
			followSnapshot(kernel, inv.Current())
		}
	}
	concerns := inv.classified(ctx, w.Events, kernel)
	var followUp <-chan time.Time
	var pending concern // what the follow-up reads again
	for {
		select {
		case <-ctx.Done():
			if concerns != nil {
				for range concerns { // the source has closed its socket when this ends
				}
			}
			return
		case <-tick:
			inv.rescan("rescan timer", w)
			watched()
		case <-fakeNet.notices():
			if names := kernel.SysChanged(); len(names) > 0 {
				inv.rescan("netdevs the fake machine gained, already there: "+strings.Join(names, ","), w)
				watched()
			}
		case <-followUp:
			c := pending
			followUp, pending = nil, concern{}
			inv.stats.followUps.Add(1)
			inv.read("follow-up of a link event", concern{devices: inv.devicesOf(c), pfs: c.pfs, vfs: c.vfs, moves: c.moves}, w)
			watched()
		case c, ok := <-concerns:
			if !ok {
				concerns = nil
				continue
			}
			c.add(inv.settle(ctx, concerns, w.Settle))
			if c.full {
				inv.rescan(c.cause(), w)
				watched()
				continue
			}
			if kernel != nil {
				uppers.settle(&c)
			}
			if c.settled() {
				continue // upper devices that came and went within the burst
			}
			later := inv.read(c.cause(), concern{devices: c.readDevices(), pfs: c.pfs, vfs: c.vfs, moves: c.moves}, w)
			watched()
			if f := c.followed(later); w.FollowUp > 0 && !f.none() {
				pending.add(f)
				followUp = time.After(w.FollowUp)
			}
		}
	}
}

// classified runs the source and classifies each event in the source's
// goroutine; what concerns the inventory is passed on. The channel closes
// when the source ends (ctx ended, or it failed); nil without a source.
// With a kernel watch, the kernel's filter follows what the events teach,
// replaced before the event's concern is passed on.
func (inv *Inventory) classified(ctx context.Context, src LinkSource, kernel *linkfilter.Watch) <-chan concern {
	if src == nil {
		return nil
	}
	out := make(chan concern, concernBuffer)
	filter := newEventFilter(inv.sys)
	go func() {
		defer close(out)
		if kernel != nil {
			followSnapshot(kernel, inv.Current())
		}
		handle := func(ev LinkEvent) {
			if kernel != nil {
				for _, index := range kernel.TakeAdded() {
					filter.unseen(index)
				}
			}
			c := inv.classify(filter, ev)
			if kernel != nil && !kernel.Saw(filterEvent(ev, c, filter.remembered(ev, c))) {
				return
			}
			if c.none() {
				return
			}
			select {
			case out <- c:
			case <-ctx.Done():
			}
		}
		if batches, ok := src.(batchSource); ok && kernel != nil {
			kernel.Batched()
			batches.RunBatches(ctx, handle, func() { kernel.FlushStates(func(l linkfilter.Link) { handle(linkEvent(l)) }) })
			return
		}
		src.Run(ctx, handle)
	}()
	return out
}

// batchSource is a LinkSource that says where each batch of events it
// read ends (NetlinkLinks).
type batchSource interface {
	RunBatches(ctx context.Context, handle func(LinkEvent), batchEnd func())
}

// classify counts the event and says what it asks.
func (inv *Inventory) classify(f *eventFilter, ev LinkEvent) concern {
	inv.stats.events.Add(1)
	c := f.classify(inv.Current(), ev)
	if c.none() {
		inv.stats.ignored.Add(1)
	}
	return c
}

// settle takes in the rest of a burst, for at most d.
func (inv *Inventory) settle(ctx context.Context, concerns <-chan concern, d time.Duration) concern {
	var c concern
	if d <= 0 {
		return c
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return c
		case <-timer.C:
			return c
		case o, ok := <-concerns:
			if !ok {
				return c
			}
			c.add(o)
		}
	}
}

// rescan reads the whole node and hands the snapshot on.
func (inv *Inventory) rescan(cause string, w Watch) {
	snap, err := inv.Rescan(cause)
	switch {
	case err != nil && w.Failed != nil:
		w.Failed(err)
	case err == nil && w.Published != nil:
		w.Published(snap)
	}
}

// read reads again what c names (its devices, PFs and VFs; its NICs'
// moves taken in) and hands the snapshot on if it is new. It returns what
// of the moves the follow-up reads again (see Inventory.applyMoves).
func (inv *Inventory) read(cause string, c concern, w Watch) concern {
	snap, published, later := inv.updateWithVFs(cause, c.devices, c.pfs, c.vfs, c.moves)
	if published && w.Published != nil {
		w.Published(snap)
	}
	return later
}
