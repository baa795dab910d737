package inventory

import "sync/atomic"

// Stats count what the inventory did since it started: how often it read
// the whole node, how often one RDMA device, and what link events cost.
type Stats struct {
	// FullRescans are reads of the whole node (start, timer, leases
	// loaded, lost events, a device not known before).
	FullRescans uint64
	// DeviceReads are reads of one RDMA device after a link event about
	// it (a burst about several devices counts each).
	DeviceReads uint64
	// PortReads are reads of one NIC's ports alone (its netdev came back
	// to the host netns or changed: topology.Sysfs.ReadNICPorts).
	PortReads uint64
	// FollowUps are the follow-up reads made (Watch.FollowUp).
	FollowUps uint64
	// PFReads are reads of one SR-IOV PF's VFs after a link event of one
	// of its VFs' netdevs.
	PFReads uint64
	// VFReads are reads of one VF alone (its netdev moved, its PF as it was).
	VFReads uint64
	// Published are snapshots published (a device read that changed
	// nothing publishes none).
	Published uint64
	// Events are link events read; Ignored those about netdevs that are
	// no NIC's (a pod's veth, a bridge, someone's macvlan): they cost
	// their reading and one lookup.
	Events, Ignored uint64
	// LinkFilter says that the kernel filter on the link-event socket is
	// set (daemon/linkfilter); false: every link event is read (too many links
	// for one, the socket refused it, or no link events).
	LinkFilter bool
	// LinkFilterFailures are the times the socket refused the filter.
	LinkFilterFailures uint64
}

// counters are Stats as they are counted.
type counters struct {
	fullRescans, deviceReads, portReads, followUps, pfReads, vfReads, published, events, ignored, filterFailures atomic.Uint64
	linkFilter                                                                                                   atomic.Bool
}

// Stats reads the counters.
func (inv *Inventory) Stats() Stats {
	c := &inv.stats
	return Stats{
		FullRescans: c.fullRescans.Load(), DeviceReads: c.deviceReads.Load(), PortReads: c.portReads.Load(), FollowUps: c.followUps.Load(), PFReads: c.pfReads.Load(), VFReads: c.vfReads.Load(), Published: c.published.Load(),
		Events: c.events.Load(), Ignored: c.ignored.Load(),
		LinkFilter: c.linkFilter.Load(), LinkFilterFailures: c.filterFailures.Load(),
	}
}
