package inventory

import (
	"slices"
	"strings"

	"github.com/railcni/rail/daemon/linkfilter"
	"github.com/railcni/rail/pkg/topology"
)

// The inventory's side of the kernel filter (daemon/linkfilter): what an
// event and a snapshot tell the filter's watch, and what the watch hands
// back.

// newKernelWatch is the filter's watch of src, its health counted in
// stats and its first failure handed to onFail.
func newKernelWatch(src linkfilter.Source, parents bool, stats *counters, onFail func(error)) *linkfilter.Watch {
	failedOnce := false
	return linkfilter.New(src, parents, func(set bool, err error) {
		stats.linkFilter.Store(set)
		if err == nil {
			return
		}
		stats.filterFailures.Add(1)
		if !failedOnce && onFail != nil {
			failedOnce = true
			onFail(err)
		}
	})
}

// link is what the kernel filter follows of the event's link.
func (ev LinkEvent) link() linkfilter.Link {
	return linkfilter.Link{Index: ev.Index, Lower: ev.Lower, Seen: linkfilter.Seen{Name: ev.Name, State: ev.State}}
}

// linkEvent is a link the kernel showed, as an event of its own.
func linkEvent(l linkfilter.Link) LinkEvent {
	return LinkEvent{Name: l.Name, Index: l.Index, State: l.State, Lower: l.Lower}
}

// filterEvent is what a classified event teaches the filter: c is its
// concern, remembered what the reader's memory says (eventFilter.remembered).
func filterEvent(ev LinkEvent, c concern, remembered bool) linkfilter.Event {
	_, upper := c.uppers[ev.Index]
	return linkfilter.Event{Link: ev.link(), Gone: ev.Gone, Moved: ev.Moved, Lost: ev.Lost, Upper: upper, Concerns: !c.none(), Remembered: remembered}
}

// followSnapshot has the filter follow snap's netdevs: the names of those
// it watches from now on (see linkfilter.Watch.Follow).
func followSnapshot(k *linkfilter.Watch, snap *Snapshot) []string {
	var vfs []string
	for _, pf := range snap.Machine.PFs {
		for _, vf := range pf.VFs {
			if vf.Netdev != "" {
				vfs = append(vfs, vf.Netdev)
			}
		}
	}
	return k.Follow(snap.Version, snapshotNetdevs(snap), vfs)
}

// upperSettler marks the upper devices that a concern saw, and not leave,
// as left when they are gone now: the filter drops the departure of one it
// does not watch yet (set up and moved into a pod right after, or moved
// once down: the filter passes an upper device only when it is up), and
// it watches one only once it stayed past its burst, so another plugin's
// macvlans cost no program change. One seen changing (set up after it
// arrived down) is watched from then on as one seen arriving.
//
// Its departure may also have been on its way to the loop while it was
// asked after: the departure of an upper device the last call found gone
// asks for nothing. The loop's alone.
type upperSettler struct {
	k    *linkfilter.Watch
	left map[int]bool // the upper devices the last settle found gone
}

func (s *upperSettler) settle(c *concern) {
	left := map[int]bool{}
	for index, u := range c.uppers {
		switch {
		case !u.cameFirst && u.goneNow && s.left[index]:
			delete(c.uppers, index)
		case !u.goneNow && s.k.UpperLeft(index, u.lower):
			u.goneNow = true
			c.uppers[index] = u
			left[index] = true
		}
	}
	s.left = left
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
	for netdev := range snap.Away {
		names = append(names, netdev)
	}
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
