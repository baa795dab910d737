package attach

import (
	"errors"
	"fmt"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// createIPVLAN creates the ipvlan (L2) child s.Name of parent inside the
// pod. The child carries the parent's MAC and its own address; an
// InfiniBand parent is refused (its children are IPoIB's).
func createIPVLAN(sess *session, parent netlink.Link, s Spec) error {
	if err := requireEthernetParent(parent, s.Mode); err != nil {
		return err
	}
	iv := &netlink.IPVlan{LinkAttrs: childAttrs(sess, parent, s), Mode: netlink.IPVLAN_MODE_L2, Flag: netlink.IPVLAN_FLAG_BRIDGE}
	if err := sess.hostNL.LinkAdd(iv); err != nil {
		return fmt.Errorf("create ipvlan (L2) %s on %s (MTU %d, parent MTU %d) in pod netns: %w%s",
			s.Name, s.Parent, s.MTU, parent.Attrs().MTU, err, missingKind(err, "ipvlan"))
	}
	return nil
}

// requireEthernetParent refuses a parent that is not Ethernet for a RoCE
// child mode, naming what it is and the mode for InfiniBand.
func requireEthernetParent(parent netlink.Link, m Mode) error {
	if parent.Attrs().EncapType != "infiniband" {
		return nil
	}
	return fmt.Errorf("%s mode needs an Ethernet (RoCE) parent: %s is InfiniBand; use mode %q for InfiniBand ports",
		m, parent.Attrs().Name, ModeIPoIB)
}

// missingKind explains the kernel's EOPNOTSUPP for a link kind it has no
// driver for (no module, or modules cannot be loaded).
func missingKind(err error, kind string) string {
	if !errors.Is(err, unix.EOPNOTSUPP) {
		return ""
	}
	return fmt.Sprintf(" (this kernel has no %s link driver: load the %s module, or use mode %q)", kind, kind, ModeMacvlan)
}
