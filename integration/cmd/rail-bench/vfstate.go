package main

import (
	"fmt"
	"net"
	"path/filepath"
	"time"

	"github.com/vishvananda/netlink"
)

// slotMAC is the admin MAC upstream gives the VF of slot: locally
// administered and not of the form rail gives leases (api.LeaseMAC), which
// raild would report as leaked.
func slotMAC(slot int) net.HardwareAddr {
	return net.HardwareAddr{0x02, 0x00, 0x72, 0x62, 0x00, byte(slot + 1)}
}

// vfStates is every VF of the PF as the PF reports it (IFLA_VF_INFO) and
// its host netdev (name, MTU, MAC, up, alias), one line per VF: what the
// bench must leave as it found it.
func vfStates(pf vfPF) (map[int]string, error) {
	h, err := netlink.NewHandle()
	if err != nil {
		return nil, err
	}
	defer h.Close()
	link, err := h.LinkByName(pf.name)
	if err != nil {
		return nil, fmt.Errorf("PF %s: %w", pf.name, err)
	}
	out := map[int]string{}
	for _, v := range link.Attrs().Vfs {
		out[v.ID] = fmt.Sprintf("admin mac %s vlan %d qos %d proto %#x spoofchk %v trust %d link_state %d rate %d-%d",
			v.Mac, v.Vlan, v.Qos, v.VlanProto, v.Spoofchk, v.Trust, v.LinkState, v.MinTxRate, v.MaxTxRate)
	}
	for _, vf := range pf.vfs {
		dir := filepath.Join("/sys/class/net", pf.name, "device", fmt.Sprintf("virtfn%d", vf.index), "net")
		netdev := firstDirEntry(dir)
		if netdev == "" {
			out[vf.index] += "; no netdev in the host netns"
			continue
		}
		l, err := h.LinkByName(netdev)
		if err != nil {
			return nil, fmt.Errorf("VF %d netdev %s: %w", vf.index, netdev, err)
		}
		a := l.Attrs()
		out[vf.index] += fmt.Sprintf("; netdev %s mtu %d mac %s up %v alias %q", a.Name, a.MTU, a.HardwareAddr,
			a.Flags&net.FlagUp != 0, a.Alias)
	}
	return out, nil
}

// vfChanges compares the VFs with how they were, waiting up to settle
// for the VF drivers' asynchronous resets (a PF-set MAC reaches an igbvf
// VF once its driver resets).
func vfChanges(pf vfPF, before map[int]string) ([]string, error) {
	deadline := time.Now().Add(settle)
	for {
		now, err := vfStates(pf)
		if err != nil {
			return nil, err
		}
		var diff []string
		for _, vf := range pf.vfs {
			if now[vf.index] != before[vf.index] {
				diff = append(diff, fmt.Sprintf("VF %d of %s: %s, was %s", vf.index, pf.name, now[vf.index], before[vf.index]))
			}
		}
		if len(diff) == 0 || time.Now().After(deadline) {
			return diff, nil
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// setUpAsBefore sets the VF netdev of slot up when it was up before the
// bench: upstream host-device and sriov-cni hand a VF back down (an
// upstream behaviour the bench puts right, untimed, so rail finds every
// VF as the node had it).
func setUpAsBefore(pf vfPF, wasUp map[int]bool) func(slot int) error {
	return func(slot int) error {
		vf := pf.vfs[slot]
		if !wasUp[vf.index] {
			return nil
		}
		name := firstDirEntry(filepath.Join("/sys/class/net", pf.name, "device", fmt.Sprintf("virtfn%d", vf.index), "net"))
		link, err := netlink.LinkByName(name)
		if err != nil {
			return fmt.Errorf("upstream left VF %d (%q): %w", vf.index, name, err)
		}
		if err := netlink.LinkSetUp(link); err != nil {
			return fmt.Errorf("set VF netdev %s up again: %w", name, err)
		}
		return nil
	}
}

// upVFs says which VF netdevs are up.
func upVFs(pf vfPF) (map[int]bool, error) {
	out := map[int]bool{}
	for _, vf := range pf.vfs {
		link, err := netlink.LinkByName(vf.netdev)
		if err != nil {
			return nil, fmt.Errorf("VF netdev %s: %w", vf.netdev, err)
		}
		out[vf.index] = link.Attrs().Flags&net.FlagUp != 0
	}
	return out, nil
}
