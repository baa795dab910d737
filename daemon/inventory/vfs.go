package inventory

import (
	"github.com/railcni/rail/pkg/topology"
)

// vfFilter tells which link events concern the SR-IOV inventory: those of
// a VF's netdev (known from the snapshot's PFs, or a new link whose PCI
// function has a physfn) that came, went, or changed name or state. Each
// asks for its one PF to be read again, not the node.
type vfFilter struct {
	sys     *topology.Sysfs
	version uint64            // the snapshot links.byName was built from
	links   linkMemory        // VF netdevs -> their PFs' PCI addresses
	vfPCI   map[string]string // VF netdevs -> their own PCI addresses (same snapshot)
}

func newVFFilter(sys *topology.Sysfs) vfFilter {
	return vfFilter{sys: sys, links: newLinkMemory()}
}

// classify returns the PF an event asks to read again ("" none), and the
// VF (its PCI address) when the event is of a VF the snapshot knows by
// name: that VF alone is then read again, unless the PF changed more
// (topology.Sysfs.DiscoverVFs). A link it does not know is looked up in
// sysfs only when device says it could be a NIC's (it has a `device`): a
// pod's veth costs nothing more.
func (f *vfFilter) classify(snap *Snapshot, ev LinkEvent, device bool) (pf, vf string) {
	f.follow(snap)
	pf, known := f.links.lookup(ev)
	vf = f.vfPCI[ev.Name]
	switch {
	case known && ev.Gone:
		f.links.forget(ev.Index)
		return pf, vf
	case ev.Gone:
		return "", ""
	case !known:
		if !device {
			return "", ""
		}
		if pf = f.sys.NetdevPF(ev.Name); pf == "" {
			return "", ""
		}
		vf = "" // new to the snapshot: the PF is read whole
	}
	if !f.links.changed(ev, pf) {
		return "", ""
	}
	return pf, vf
}

// follow rebuilds the netdev map when a new snapshot was published.
func (f *vfFilter) follow(snap *Snapshot) {
	if f.links.byName != nil && snap.Version == f.version {
		return
	}
	f.version = snap.Version
	f.links.byName, f.vfPCI = map[string]string{}, map[string]string{}
	for _, pf := range snap.Machine.PFs {
		for _, vf := range pf.VFs {
			if vf.Netdev != "" {
				f.links.byName[vf.Netdev] = pf.PCI
				f.vfPCI[vf.Netdev] = vf.PCI
			}
		}
	}
}
