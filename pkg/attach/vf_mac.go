package attach

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

// setVFMAC sets the netdev's MAC and the admin MAC; its one inverse
// restores both (restoreVFMAC). The netdev's first: a VF may change its
// own MAC while its PF has set none, so the PF's follows in one call, where
// the PF's first made igb refuse the VF's change and cost a clear and two
// more calls. A PF that set a MAC already (an admin's) gets that sequence.
func (a attacher) setVFMAC(sess *session, hostLink netlink.Link, s Spec, before vfpf.State, rec *vfRecord, undo *undoList) error {
	pf, v := a.pfControl(sess), s.VF
	rec.MAC = macOrZero(before.MAC)
	rec.HostMAC = macOrZero(hostLink.Attrs().HardwareAddr)
	err := a.linkSetMAC(sess, hostLink, v.Config.MAC)
	switch {
	case err == nil:
		if err := pf.SetVFMAC(v.PF, v.Index, v.Config.MAC); err != nil {
			err = fmt.Errorf("set mac of VF %d of PF %s through the PF: %w", v.Index, v.PF, err)
			return errors.Join(err, a.restoreVFMAC(sess, rec, s.Parent))
		}
	case refusedByPF(err):
		if err := a.setNetdevMACCleared(sess, v.PF, v.Index, hostLink, v.Config.MAC, v.Config.MAC, err); err != nil {
			err = fmt.Errorf("set mac %s on VF netdev %s: %w", v.Config.MAC, s.Parent, err)
			return errors.Join(err, a.restoreVFMAC(sess, rec, s.Parent))
		}
	default:
		return fmt.Errorf("set mac %s on VF netdev %s: %w", v.Config.MAC, s.Parent, err)
	}
	undo.push(fmt.Sprintf("mac of VF %d of PF %s", v.Index, v.PF), func() error { return a.restoreVFMAC(sess, rec, s.Parent) })
	return nil
}

// setNetdevMAC gives the VF's netdev mac; when the PF driver refuses the
// VF the change, it clears the PF's MAC, lets the VF set mac, and leaves
// the PF with admin (nil: with what the VF set).
func (a attacher) setNetdevMAC(sess *session, pfName string, index int, link netlink.Link, mac, admin net.HardwareAddr) error {
	err := a.linkSetMAC(sess, link, mac)
	if err == nil || !refusedByPF(err) {
		return err
	}
	return a.setNetdevMACCleared(sess, pfName, index, link, mac, admin, err)
}

// setNetdevMACCleared is setNetdevMAC once the PF refused the VF the
// change (refused): the PF's MAC cleared, the VF sets mac, the PF sets
// admin (nil: none).
func (a attacher) setNetdevMACCleared(sess *session, pfName string, index int, link netlink.Link, mac, admin net.HardwareAddr, refused error) error {
	pf := a.pfControl(sess)
	if err := pf.SetVFMAC(pfName, index, make(net.HardwareAddr, 6)); err != nil {
		return errors.Join(refused, fmt.Errorf("clear the PF-set mac to let the VF change its own: %w", err))
	}
	if err := a.linkSetMAC(sess, link, mac); err != nil {
		return fmt.Errorf("with the PF-set mac cleared: %w", err)
	}
	if admin == nil {
		return nil
	}
	return pf.SetVFMAC(pfName, index, admin)
}

// restoreVFMAC gives the VF back its admin MAC and its netdev (host name
// netdev) the MAC it had; a PF, VF or netdev that is gone needs nothing.
func (a attacher) restoreVFMAC(sess *session, rec *vfRecord, netdev string) error {
	if rec.MAC == nil && rec.HostMAC == nil {
		return nil
	}
	pf := a.pfControl(sess)
	if err := pf.SetVFMAC(rec.PF, rec.Index, rec.MAC); err != nil {
		if vfpf.Gone(pf, rec.place(), err) {
			return nil
		}
		return fmt.Errorf("reset mac of VF %d of PF %s: %w", rec.Index, rec.PF, err)
	}
	link, err := sess.hostNL.LinkByName(netdev)
	if err != nil {
		return ignoreGone(err)
	}
	if link.Attrs().HardwareAddr.String() == rec.HostMAC.String() {
		return nil
	}
	// A VF whose admin MAC was its own (igb reports the VF's own MAC when
	// no admin set one) ends as it began: with the MAC the VF set.
	var admin net.HardwareAddr
	if !vfpf.IsZeroMAC(rec.MAC) && rec.MAC.String() != rec.HostMAC.String() {
		admin = rec.MAC
	}
	if err := ignoreGone(a.setNetdevMAC(sess, rec.PF, rec.Index, link, rec.HostMAC, admin)); err != nil {
		return fmt.Errorf("restore mac %s of VF netdev %s: %w", rec.HostMAC, netdev, err)
	}
	return nil
}

// linkSetMAC sets a host link's MAC (tests model a VF driver here).
func (a attacher) linkSetMAC(sess *session, link netlink.Link, mac net.HardwareAddr) error {
	if a.setMAC != nil {
		return a.setMAC(link, mac)
	}
	return sess.hostNL.LinkSetHardwareAddr(link, mac)
}

// refusedByPF reports a VF's own MAC change refused by its PF driver (igb
// answers an untrusted VF EADDRNOTAVAIL once the PF set a MAC).
func refusedByPF(err error) bool {
	return errors.Is(err, unix.EADDRNOTAVAIL) || errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES)
}
