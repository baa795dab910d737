package topology

import (
	"slices"
	"strings"
)

// NetdevLinks is where a NIC's netdev sits among the host's netdevs, as
// sysfs shows it below /sys/class/net/<netdev>: its master link, its
// upper_* links and, for a bond master, its bonding/ directory. A netdev
// with any of them is part of the node's own networking (see Protection).
type NetdevLinks struct {
	// Master is the netdev's master (a bond, bridge, team or VRF).
	Master string `json:"master,omitempty"`
	// MasterKind is "bond" or "bridge" when the master's sysfs says so
	// (bonding/ or bridge/), else "" (team, VRF, ...).
	MasterKind string `json:"masterKind,omitempty"`
	// Uppers are the netdev's upper devices (upper_<name>), the master
	// included: VLANs, macvlans, the bond it is enslaved to.
	Uppers []string `json:"uppers,omitempty"`
	// BondMaster is true when the netdev is a bond (it has bonding/).
	BondMaster bool `json:"bondMaster,omitempty"`
	// BondSlaves are a bond master's slaves (bonding/slaves).
	BondSlaves []string `json:"bondSlaves,omitempty"`
}

// netdevLinks reads the links of one netdev; nil when it has none.
func (d *discovery) netdevLinks(netdev string) *NetdevLinks {
	if netdev == "" {
		return nil
	}
	dir := "/sys/class/net/" + netdev
	var l NetdevLinks
	if d.fs.isLink(dir + "/master") {
		if master, err := d.fs.linkName(dir + "/master"); err == nil {
			l.Master = master
			l.MasterKind = d.masterKind(master)
		} else {
			// A master link that does not resolve still says the netdev is
			// enslaved: keep what the link names.
			l.Master = "(unreadable master)"
		}
	}
	if names, err := d.fs.names(dir); err == nil {
		for _, name := range names {
			if upper, ok := strings.CutPrefix(name, "upper_"); ok && upper != "" {
				l.Uppers = append(l.Uppers, upper)
			}
		}
	}
	if d.fs.exists(dir + "/bonding") {
		l.BondMaster = true
		if slaves, err := d.fs.read(dir + "/bonding/slaves"); err == nil {
			l.BondSlaves = strings.Fields(slaves)
		}
	}
	if l.Master == "" && len(l.Uppers) == 0 && !l.BondMaster {
		return nil
	}
	sortNatural(l.Uppers)
	return &l
}

func (d *discovery) masterKind(master string) string {
	dir := "/sys/class/net/" + master
	switch {
	case d.fs.exists(dir + "/bonding"):
		return "bond"
	case d.fs.exists(dir + "/bridge"):
		return "bridge"
	}
	return ""
}

// OtherUppers are the netdev's upper devices besides its master.
func (l *NetdevLinks) OtherUppers() []string {
	if l == nil {
		return nil
	}
	return slices.DeleteFunc(slices.Clone(l.Uppers), func(u string) bool { return u == l.Master })
}
