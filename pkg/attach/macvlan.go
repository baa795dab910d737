package attach

import (
	"fmt"
	"net"

	"github.com/vishvananda/netlink"
)

// macvlanModeOf maps Spec.MacvlanMode to the kernel's mode; "" is bridge.
func macvlanModeOf(mode string) (netlink.MacvlanMode, error) {
	switch mode {
	case "", "bridge":
		return netlink.MACVLAN_MODE_BRIDGE, nil
	case "private":
		return netlink.MACVLAN_MODE_PRIVATE, nil
	case "vepa":
		return netlink.MACVLAN_MODE_VEPA, nil
	case "passthru":
		return netlink.MACVLAN_MODE_PASSTHRU, nil
	default:
		return 0, fmt.Errorf("MacvlanMode %q is unknown: use bridge, private, vepa or passthru", mode)
	}
}

// createMacvlan creates the macvlan child s.Name of parent inside the pod.
func createMacvlan(sess *session, parent netlink.Link, s Spec) error {
	mode, err := macvlanModeOf(s.MacvlanMode)
	if err != nil {
		return err
	}
	attrs := childAttrs(sess, parent, s)
	if s.MAC != "" {
		if attrs.HardwareAddr, err = net.ParseMAC(s.MAC); err != nil {
			return fmt.Errorf("MAC %q: %w", s.MAC, err)
		}
	}
	mv := &netlink.Macvlan{LinkAttrs: attrs, Mode: mode}
	if err := sess.hostNL.LinkAdd(mv); err != nil {
		return fmt.Errorf("create macvlan %s on %s (MTU %d, parent MTU %d) in pod netns: %w",
			s.Name, s.Parent, s.MTU, parent.Attrs().MTU, err)
	}
	return nil
}

// childAttrs are the attributes of a child link s.Name of parent created
// directly in the pod's netns, with s.MTU (0: the parent's).
func childAttrs(sess *session, parent netlink.Link, s Spec) netlink.LinkAttrs {
	attrs := netlink.NewLinkAttrs()
	attrs.Name = s.Name
	attrs.ParentIndex = parent.Attrs().Index
	attrs.Namespace = netlink.NsFd(int(sess.pod.Fd()))
	attrs.MTU = s.MTU
	return attrs
}
