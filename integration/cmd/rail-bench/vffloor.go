package main

import (
	"context"
	"errors"
	"fmt"
	"net"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"

	"github.com/railcni/rail/integration/harness"
)

// vfFloor is the kernel's own work of vf mode, with no exec, no address
// and no raild, in the netlink calls rail makes: ADD reads the VF's state
// from its PF, sets through the PF the admin MAC, VLAN/QoS, spoofchk, the
// rate and trust (the bench's settings), then moves the VF's netdev into a
// netns of its own (one RTM_NEWLINK with IFLA_NET_NS_FD); DEL moves it
// back and sets through the PF every setting back to what ADD read.
type vfFloor struct {
	*floorNetns // its host is the caller's netns (host nil: not deleted)
	pf          string
	vf          vfFunc
	settings    vfSettings
	mac         net.HardwareAddr
	before      netlink.VfInfo
}

// newVFFloor opens a netns for the floor's VF (the PF's netns is the
// caller's). On error nothing is left.
func newVFFloor(runID, pf string, vf vfFunc, s vfSettings) (_ *vfFloor, retErr error) {
	ns := &floorNetns{hostFd: netns.None(), podFd: netns.None()}
	defer func() {
		if retErr != nil {
			retErr = errors.Join(retErr, ns.close())
		}
	}()
	var err error
	if ns.pod, err = harness.CreateNetNS(namePrefix + "vf-" + runID); err != nil {
		return nil, err
	}
	if ns.hostFd, err = netns.Get(); err != nil {
		return nil, fmt.Errorf("VF floor: this netns: %w", err)
	}
	if ns.podFd, err = ns.pod.Handle(); err != nil {
		return nil, err
	}
	if ns.hostH, err = netlink.NewHandle(); err != nil {
		return nil, fmt.Errorf("VF floor: netlink: %w", err)
	}
	if ns.podH, err = ns.pod.Netlink(); err != nil {
		return nil, err
	}
	return &vfFloor{floorNetns: ns, pf: pf, vf: vf, settings: s, mac: floorMAC}, nil
}

// floorMAC is the admin MAC the floor sets: locally administered, and not
// of the form rail gives leases (raild would take it for a leaked one).
var floorMAC = net.HardwareAddr{0x02, 0x00, 0x72, 0x62, 0xff, 0x01}

// pfVF reads the PF (one RTM_GETLINK, as rail reads a VF's state) and the
// floor's VF on it.
func (f *vfFloor) pfVF() (netlink.Link, netlink.VfInfo, error) {
	pf, err := f.hostH.LinkByName(f.pf)
	if err != nil {
		return nil, netlink.VfInfo{}, fmt.Errorf("VF floor: PF %s: %w", f.pf, err)
	}
	for _, info := range pf.Attrs().Vfs {
		if info.ID == f.vf.index {
			return pf, info, nil
		}
	}
	return nil, netlink.VfInfo{}, fmt.Errorf("VF floor: PF %s reports no VF %d", f.pf, f.vf.index)
}

func (f *vfFloor) add(context.Context, int) error {
	pf, before, err := f.pfVF()
	if err != nil {
		return err
	}
	f.before = before
	s, i := f.settings, f.vf.index
	steps := []struct {
		what string
		do   func() error
	}{
		{"mac", func() error { return f.hostH.LinkSetVfHardwareAddr(pf, i, f.mac) }},
		{"vlan", func() error { return f.hostH.LinkSetVfVlanQosProto(pf, i, s.vlan, s.qos, vlan8021Q) }},
		{"spoofchk", func() error { return f.hostH.LinkSetVfSpoofchk(pf, i, s.spoofchk) }},
		{"max_tx_rate", func() error { return f.hostH.LinkSetVfRate(pf, i, 0, s.maxTxRate) }},
		{"trust", func() error { return f.hostH.LinkSetVfTrust(pf, i, s.trust) }},
	}
	for _, st := range steps {
		if err := st.do(); err != nil {
			return fmt.Errorf("VF floor: set %s of VF %d of %s: %w", st.what, i, f.pf, err)
		}
	}
	link, err := f.hostH.LinkByName(f.vf.netdev)
	if err != nil {
		return fmt.Errorf("VF floor: VF netdev %s: %w", f.vf.netdev, err)
	}
	if err := f.hostH.LinkSetNsFd(link, int(f.podFd)); err != nil {
		return fmt.Errorf("VF floor: move %s into %s: %w", f.vf.netdev, f.pod.Name, err)
	}
	// up in the pod, as every plugin leaves a pod's interface (the VF
	// driver's open; moving it back closes it)
	if err := f.podH.LinkSetUp(link); err != nil {
		return fmt.Errorf("VF floor: set %s up in %s: %w", f.vf.netdev, f.pod.Name, err)
	}
	return nil
}

func (f *vfFloor) del(context.Context, int) error {
	link, err := f.podH.LinkByName(f.vf.netdev)
	if err != nil {
		return fmt.Errorf("VF floor: find %s in %s: %w", f.vf.netdev, f.pod.Name, err)
	}
	if err := f.podH.LinkSetNsFd(link, int(f.hostFd)); err != nil {
		return fmt.Errorf("VF floor: move %s back: %w", f.vf.netdev, err)
	}
	pf, err := f.hostH.LinkByName(f.pf)
	if err != nil {
		return fmt.Errorf("VF floor: PF %s: %w", f.pf, err)
	}
	b, i := f.before, f.vf.index
	proto := b.VlanProto
	if proto == 0 {
		proto = vlan8021Q
	}
	mac := b.Mac
	if len(mac) == 0 {
		mac = make(net.HardwareAddr, 6)
	}
	steps := []struct {
		what string
		do   func() error
	}{
		{"trust", func() error { return f.hostH.LinkSetVfTrust(pf, i, b.Trust != 0) }},
		{"max_tx_rate", func() error { return f.hostH.LinkSetVfRate(pf, i, int(b.MinTxRate), int(b.MaxTxRate)) }},
		{"spoofchk", func() error { return f.hostH.LinkSetVfSpoofchk(pf, i, b.Spoofchk) }},
		{"vlan", func() error { return f.hostH.LinkSetVfVlanQosProto(pf, i, b.Vlan, b.Qos, proto) }},
		{"mac", func() error { return f.hostH.LinkSetVfHardwareAddr(pf, i, mac) }},
	}
	var errs []error
	for _, st := range steps {
		if err := st.do(); err != nil {
			errs = append(errs, fmt.Errorf("VF floor: reset %s of VF %d of %s: %w", st.what, i, f.pf, err))
		}
	}
	return errors.Join(errs...)
}

// leftover says what is not as it was: the VF's netdev not back home.
func (f *vfFloor) leftover() []string {
	if _, err := f.hostH.LinkByName(f.vf.netdev); err != nil {
		return []string{fmt.Sprintf("VF floor: %s is not back in the host netns: %v", f.vf.netdev, err)}
	}
	return nil
}
