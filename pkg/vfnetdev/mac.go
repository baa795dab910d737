package vfnetdev

import (
	"errors"
	"fmt"
	"net"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/railcni/rail/pkg/vfpf"
)

// A VF's MAC lives in two places: the admin MAC its PF holds for it and
// the MAC of its netdev. Both must say the same, or the VF's traffic is
// filtered: a VF driver takes a PF-set MAC only at its next reset
// (igbvf), and a trusted VF brought up with its old MAC replaces the
// PF's. So the netdev gets the admin MAC too, before it moves. Some PF
// drivers (igb) then refuse an untrusted VF any MAC change of its own
// once the PF set one; for those the PF's MAC is cleared, the VF sets its
// own, and the PF sets the MAC again.

// MACs are a VF's MACs before the MAC step (zeroes: none), which its
// inverse restores.
type MACs struct {
	MAC     net.HardwareAddr // the admin MAC its PF held
	HostMAC net.HardwareAddr // its netdev's own
}

// MACStep sets the MAC of vf's netdev link (in the host, named as it is
// there) and its admin MAC to mac; its one inverse restores both
// (RestoreMAC) from the MACs returned. before is the VF's state as its PF
// reports it. The netdev's first: a VF may change its own MAC while its
// PF has set none, so the PF's follows in one call, where the PF's first
// made igb refuse the VF's change and cost a clear and two more calls. A
// PF that set a MAC already (an admin's) gets that sequence.
func (n Node) MACStep(vf vfpf.VF, link netlink.Link, mac net.HardwareAddr, before vfpf.State) (Step, MACs) {
	was := MACs{MAC: macOrZero(before.MAC), HostMAC: macOrZero(link.Attrs().HardwareAddr)}
	netdev := link.Attrs().Name
	undo := func() error { return n.RestoreMAC(vf, was, netdev) }
	do := func() (netlink.Link, error) {
		err := n.Links.SetMAC(link, mac)
		switch {
		case err == nil:
			if err := n.PF.SetVFMAC(vf.PF, vf.Index, mac); err != nil {
				err = fmt.Errorf("set mac of VF %d of PF %s through the PF: %w", vf.Index, vf.PF, err)
				return nil, errors.Join(err, undo())
			}
		case refusedByPF(err):
			if err := n.setNetdevMACCleared(vf, link, mac, mac, err); err != nil {
				err = fmt.Errorf("set mac %s on VF netdev %s: %w", mac, netdev, err)
				return nil, errors.Join(err, undo())
			}
		default:
			return nil, fmt.Errorf("set mac %s on VF netdev %s: %w", mac, netdev, err)
		}
		return nil, nil
	}
	return Step{Setting: "mac", Do: do, Undo: undo}, was
}

// RestoreMAC gives vf back its admin MAC and its netdev (host name
// netdev) the MAC it had, as was says; a PF, VF or netdev that is gone
// needs nothing.
func (n Node) RestoreMAC(vf vfpf.VF, was MACs, netdev string) error {
	if was.MAC == nil && was.HostMAC == nil {
		return nil
	}
	if err := n.PF.SetVFMAC(vf.PF, vf.Index, was.MAC); err != nil {
		if vfpf.Gone(n.PF, vf, err) {
			return nil
		}
		return fmt.Errorf("reset mac of VF %d of PF %s: %w", vf.Index, vf.PF, err)
	}
	link, err := n.Links.LinkByName(netdev)
	if err != nil {
		return ignoreGone(err)
	}
	if link.Attrs().HardwareAddr.String() == was.HostMAC.String() {
		return nil
	}
	// A VF whose admin MAC was its own (igb reports the VF's own MAC when
	// no admin set one) ends as it began: with the MAC the VF set.
	var admin net.HardwareAddr
	if !vfpf.IsZeroMAC(was.MAC) && was.MAC.String() != was.HostMAC.String() {
		admin = was.MAC
	}
	if err := ignoreGone(n.setNetdevMAC(vf, link, was.HostMAC, admin)); err != nil {
		return fmt.Errorf("restore mac %s of VF netdev %s: %w", was.HostMAC, netdev, err)
	}
	return nil
}

// setNetdevMAC gives the VF's netdev mac; when the PF driver refuses the
// VF the change, it clears the PF's MAC, lets the VF set mac, and leaves
// the PF with admin (nil: with what the VF set).
func (n Node) setNetdevMAC(vf vfpf.VF, link netlink.Link, mac, admin net.HardwareAddr) error {
	err := n.Links.SetMAC(link, mac)
	if err == nil || !refusedByPF(err) {
		return err
	}
	return n.setNetdevMACCleared(vf, link, mac, admin, err)
}

// setNetdevMACCleared is setNetdevMAC once the PF refused the VF the
// change (refused): the PF's MAC cleared, the VF sets mac, the PF sets
// admin (nil: none).
func (n Node) setNetdevMACCleared(vf vfpf.VF, link netlink.Link, mac, admin net.HardwareAddr, refused error) error {
	if err := n.PF.SetVFMAC(vf.PF, vf.Index, make(net.HardwareAddr, 6)); err != nil {
		return errors.Join(refused, fmt.Errorf("clear the PF-set mac to let the VF change its own: %w", err))
	}
	if err := n.Links.SetMAC(link, mac); err != nil {
		return fmt.Errorf("with the PF-set mac cleared: %w", err)
	}
	if admin == nil {
		return nil
	}
	return n.PF.SetVFMAC(vf.PF, vf.Index, admin)
}

// refusedByPF reports a VF's own MAC change refused by its PF driver (igb
// answers an untrusted VF EADDRNOTAVAIL once the PF set a MAC).
func refusedByPF(err error) bool {
	return errors.Is(err, unix.EADDRNOTAVAIL) || errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES)
}

func macOrZero(mac net.HardwareAddr) net.HardwareAddr {
	if len(mac) == 0 {
		return make(net.HardwareAddr, 6)
	}
	return append(net.HardwareAddr(nil), mac...)
}
