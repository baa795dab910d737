package inventory

import (
	"fmt"
	"slices"

	"github.com/railcni/rail/daemon/linkfilter"
	"github.com/railcni/rail/pkg/topology"
)

// concern is what link events ask of the inventory.
type concern struct {
	full    bool     // read the whole node (events were lost)
	devices []string // RDMA devices to read again
	// moves are NICs' netdevs that left the host netns, came back or
	// changed, by name, as the burst's last event left them: a NIC's
	// ports read again alone, or its netdev marked away (moves.go).
	moves map[string]netdevMove
	// uppers are upper devices of NICs' netdevs (a macvlan, a VLAN) that
	// came or went, by ifindex: one that came and went within a burst
	// (another plugin's macvlan made on the NIC, then moved into its pod)
	// changed nothing of the NIC and asks for no read.
	uppers map[int]upperSeen
	// netdevs are links that could be NICs with no RDMA device known:
	// looked at again by the follow-up (a VF's RDMA device registers
	// after its netdev appears, with no event of its own).
	netdevs []string
	// pfs are SR-IOV PFs (PCI addresses) whose VFs to read again: a VF's
	// netdev came, went or changed (sriov_numvfs written, a VF driver
	// bound or unbound).
	pfs []string
	// vfs are VFs (PCI addresses, by their PF's) whose netdev came, went
	// or changed and that the snapshot knows: read again alone, their PF
	// whole only when it changed more.
	vfs    map[string][]string
	first  string // the first event's link, for the cause
	events int    // how many events asked for it
}

// upperSeen is what a burst saw of one upper device: its NIC, and whether
// its first event was its arrival and its last its departure.
type upperSeen struct {
	device             string
	lower              int // the NIC's netdev's ifindex
	cameFirst, goneNow bool
}

func (c *concern) none() bool {
	return !c.full && len(c.devices) == 0 && len(c.moves) == 0 && len(c.netdevs) == 0 && len(c.uppers) == 0 && len(c.pfs) == 0 && len(c.vfs) == 0
}

// settled says that what the burst asks cancelled out: only upper devices
// that arrived and left again.
func (c *concern) settled() bool {
	return !c.full && len(c.readDevices()) == 0 && len(c.moves) == 0 && len(c.netdevs) == 0 && len(c.pfs) == 0 && len(c.vfs) == 0
}

// readDevices are the RDMA devices to read: those asked for, and the NICs
// of upper devices that did not come and go within the burst.
func (c *concern) readDevices() []string {
	devices := slices.Clone(c.devices)
	for _, u := range c.uppers {
		if (!u.cameFirst || !u.goneNow) && !slices.Contains(devices, u.device) {
			devices = append(devices, u.device)
		}
	}
	slices.Sort(devices)
	return devices
}

// add takes in what another event (or burst) asks.
func (c *concern) add(o concern) {
	if c.none() {
		c.first = o.first
	}
	c.full = c.full || o.full
	for _, d := range o.devices {
		if !slices.Contains(c.devices, d) {
			c.devices = append(c.devices, d)
		}
	}
	for netdev, m := range o.moves {
		if c.moves == nil {
			c.moves = map[string]netdevMove{}
		}
		c.moves[netdev] = m // the later event says where it is now
	}
	for _, n := range o.netdevs {
		if !slices.Contains(c.netdevs, n) {
			c.netdevs = append(c.netdevs, n)
		}
	}
	for index, u := range o.uppers {
		if c.uppers == nil {
			c.uppers = map[int]upperSeen{}
		}
		if have, seen := c.uppers[index]; seen {
			u.cameFirst = have.cameFirst // the first event stays the first
		}
		c.uppers[index] = u
	}
	for _, pf := range o.pfs {
		if !slices.Contains(c.pfs, pf) {
			c.pfs = append(c.pfs, pf)
		}
	}
	for pf, vfs := range o.vfs {
		if c.vfs == nil {
			c.vfs = map[string][]string{}
		}
		for _, vf := range vfs {
			if !slices.Contains(c.vfs[pf], vf) {
				c.vfs[pf] = append(c.vfs[pf], vf)
			}
		}
	}
	c.events += o.events
}

// followed is what the follow-up reads again of what c asked: what trails
// a device's or a VF's netdev without an event of its own (the devices,
// PFs and VFs read), and of its NICs' moves only what the read found not
// settled yet (later: see Inventory.applyMoves).
func (c *concern) followed(later concern) concern {
	f := *c
	f.moves = nil
	f.add(later)
	return f
}

// cause names the events in a snapshot's Cause: "link event ens1 (+3)".
func (c *concern) cause() string {
	cause := "link event " + c.first
	if c.events > 1 {
		cause += fmt.Sprintf(" (+%d)", c.events-1)
	}
	return cause
}

// eventFilter tells which link events concern the inventory: those about
// a netdev of a NIC it knows (by the name the current snapshot gives, or
// by the ifindex an earlier event of that netdev had: renamed since),
// upper devices of such a netdev in the same netns (a VLAN or macvlan on
// it makes it the node's own), and new links that could be NICs (a
// `device` link in sysfs). Every other
// link (a pod's veth, a bridge, someone's macvlan) costs one lookup, and
// so does an event of a NIC's netdev whose linkfilter.State is as its last
// event left it.
type eventFilter struct {
	sys     *topology.Sysfs
	version uint64     // the snapshot links.byName was built from
	links   linkMemory // NIC netdevs -> their RDMA devices
	vfs     vfFilter   // VF netdevs -> their SR-IOV PFs
}

func newEventFilter(sys *topology.Sysfs) *eventFilter {
	return &eventFilter{sys: sys, links: newLinkMemory(), vfs: newVFFilter(sys)}
}

// classify says what one event asks of the inventory, given its current
// snapshot: the RDMA devices to read again and the SR-IOV PFs.
func (f *eventFilter) classify(snap *Snapshot, ev LinkEvent) concern {
	if ev.Lost {
		f.links.lost() // a Gone may be among the lost ones
		f.vfs.links.lost()
		return concern{full: true, first: "(events lost)", events: 1}
	}
	f.follow(snap)
	c := f.classifyNIC(ev)
	switch pf, vf := f.vfs.classify(snap, ev, !c.none()); {
	case pf != "" && vf != "":
		c.add(concern{vfs: map[string][]string{pf: {vf}}, first: ev.Name, events: 1})
		c.events = 1
	case pf != "":
		c.add(concern{pfs: []string{pf}, first: ev.Name, events: 1})
		c.events = 1
	}
	return c
}

// classifyNIC says which RDMA devices one event asks to read again.
func (f *eventFilter) classifyNIC(ev LinkEvent) concern {
	device, known := f.links.lookup(ev)
	switch {
	case known && ev.Gone && ev.Moved:
		f.links.forget(ev.Index)
		return concern{moves: map[string]netdevMove{ev.Name: {device: device, away: true}}, first: ev.Name, events: 1}
	case known && ev.Gone:
		f.links.forget(ev.Index)
		return concern{devices: []string{device}, first: ev.Name, events: 1}
	case known:
		if !f.links.changed(ev, device) {
			return concern{}
		}
		return concern{moves: map[string]netdevMove{ev.Name: {device: device}}, first: ev.Name, events: 1}
	}
	if device, upper := f.links.byIndex[ev.Lower]; upper && ev.Lower > 0 {
		// an upper device of a NIC's, in this netns
		seen := upperSeen{device: device, lower: ev.Lower, cameFirst: ev.New, goneNow: ev.Gone}
		return concern{uppers: map[int]upperSeen{ev.Index: seen}, first: ev.Name, events: 1}
	}
	if ev.Gone {
		return concern{} // a link no NIC knows went away
	}
	devices, nic := f.sys.NetdevRDMADevices(ev.Name)
	if !nic {
		return concern{}
	}
	c := concern{devices: devices, first: ev.Name, events: 1}
	if len(devices) == 0 {
		c.netdevs = []string{ev.Name}
	}
	return c
}

// unseen forgets what the last event of a link said of it: its events
// since may have been dropped (see linkfilter.Watch.TakeAdded).
func (f *eventFilter) unseen(index int) {
	f.links.unseen(index)
	f.vfs.links.unseen(index)
}

// remembered says that what the filter remembers of the event's link
// (classify has just taken the event in) is the event's name and state,
// and that another event the same would ask for nothing: a NIC's netdev
// (its memory decides), or a VF's netdev that asked nothing of the NICs.
func (f *eventFilter) remembered(ev LinkEvent, c concern) bool {
	if ev.Index <= 0 || ev.Gone || ev.Lost {
		return false
	}
	now := linkfilter.Seen{Name: ev.Name, State: ev.State}
	nic, inNIC := f.links.last[ev.Index]
	vf, inVF := f.vfs.links.last[ev.Index]
	switch {
	case inNIC:
		return nic == now && (!inVF || vf == now)
	case inVF:
		return vf == now && len(c.devices) == 0 && len(c.moves) == 0 && len(c.netdevs) == 0 && len(c.uppers) == 0
	}
	return false
}

// follow rebuilds the netdev map when a new snapshot was published: every
// netdev of its NICs, those a pod holds named as on the host.
func (f *eventFilter) follow(snap *Snapshot) {
	if f.links.byName != nil && snap.Version == f.version {
		return
	}
	f.version = snap.Version
	f.links.byName = make(map[string]string, len(snap.Machine.NICs)+len(snap.Away))
	for netdev, device := range snap.Away {
		f.links.byName[netdev] = device
	}
	for _, nic := range snap.Machine.NICs {
		device := nicDevice(nic)
		if nic.Netdev != "" {
			f.links.byName[nic.Netdev] = device
		}
		for _, p := range nic.Ports {
			for _, nd := range p.Netdevs {
				f.links.byName[nd] = device
			}
		}
	}
}

// nicDevice is the RDMA device a NIC's events ask to read.
func nicDevice(nic topology.NIC) string {
	if nic.Device != "" {
		return nic.Device
	}
	device, _ := topology.ParseTarget(nic.Name)
	return device
}

// devicesOf resolves a concern's netdevs to the RDMA devices sysfs shows
// below them now, beside its devices.
func (inv *Inventory) devicesOf(c concern) []string {
	devices := c.readDevices()
	for _, netdev := range c.netdevs {
		found, _ := inv.sys.NetdevRDMADevices(netdev)
		for _, d := range found {
			if !slices.Contains(devices, d) {
				devices = append(devices, d)
			}
		}
	}
	return devices
}
