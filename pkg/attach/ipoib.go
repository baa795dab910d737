package attach

import (
	"fmt"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// ARPHRD_* link types the parent check names.
const (
	arphrdEther      = 1
	arphrdInfiniband = 32
)

// ipoibModeOf maps Spec.IPoIBMode to IFLA_IPOIB_MODE; "" is datagram.
func ipoibModeOf(mode string) (netlink.IPoIBMode, error) {
	switch mode {
	case "", "datagram":
		return netlink.IPOIB_MODE_DATAGRAM, nil
	case "connected":
		return netlink.IPOIB_MODE_CONNECTED, nil
	default:
		return 0, fmt.Errorf("IPoIBMode %q is unknown: use datagram or connected", mode)
	}
}

// requireInfinibandParent refuses a parent whose ARPHRD type is not
// InfiniBand, saying what it is and what to use instead.
func requireInfinibandParent(parent string, hwType uint16) error {
	if hwType == arphrdInfiniband {
		return nil
	}
	kind := fmt.Sprintf("link type %d", hwType)
	if hwType == arphrdEther {
		kind = "Ethernet"
	}
	return fmt.Errorf("ipoib mode needs an InfiniBand parent: %s is %s (type %d); use mode %q for RoCE",
		parent, kind, hwType, ModeMacvlan)
}

// ipoibChild is the RTM_NEWLINK that creates an IPoIB child of an IB netdev
// directly in a target netns. It is built by hand rather than through
// netlink.IPoIB because that always sends IFLA_IPOIB_PKEY, and the kernel
// refuses P_Key 0 instead of taking the parent's: here an absent attribute
// means "the parent's P_Key".
type ipoibChild struct {
	ParentIndex int
	Name        string
	NetnsFd     int
	PKey        uint16 // 0: the parent's
	Mode        netlink.IPoIBMode
	MTU         int // 0: the parent's
}

func (c ipoibChild) request() *nl.NetlinkRequest {
	req := nl.NewNetlinkRequest(unix.RTM_NEWLINK, unix.NLM_F_CREATE|unix.NLM_F_EXCL|unix.NLM_F_ACK)
	req.AddData(nl.NewIfInfomsg(unix.AF_UNSPEC))
	req.AddData(nl.NewRtAttr(unix.IFLA_LINK, nl.Uint32Attr(uint32(c.ParentIndex))))
	req.AddData(nl.NewRtAttr(unix.IFLA_IFNAME, nl.ZeroTerminated(c.Name)))
	req.AddData(nl.NewRtAttr(unix.IFLA_NET_NS_FD, nl.Uint32Attr(uint32(c.NetnsFd))))
	if c.MTU > 0 {
		req.AddData(nl.NewRtAttr(unix.IFLA_MTU, nl.Uint32Attr(uint32(c.MTU))))
	}
	info := nl.NewRtAttr(unix.IFLA_LINKINFO, nil)
	info.AddRtAttr(nl.IFLA_INFO_KIND, nl.NonZeroTerminated("ipoib"))
	data := info.AddRtAttr(nl.IFLA_INFO_DATA, nil)
	if c.PKey != 0 {
		data.AddRtAttr(nl.IFLA_IPOIB_PKEY, nl.Uint16Attr(c.PKey))
	}
	data.AddRtAttr(nl.IFLA_IPOIB_MODE, nl.Uint16Attr(uint16(c.Mode)))
	req.AddData(info)
	return req
}

// createIPoIB checks that parent is InfiniBand and creates the IPoIB child
// s.Name inside the pod.
func createIPoIB(sess *session, parent netlink.Link, s Spec) error {
	mode, err := ipoibModeOf(s.IPoIBMode)
	if err != nil {
		return err
	}
	sock, err := openRouteSocket(netns.None())
	if err != nil {
		return err
	}
	defer sock.close()
	hwType, err := sock.hardwareType(parent.Attrs().Index)
	if err != nil {
		return fmt.Errorf("read link type of %s: %w", s.Parent, err)
	}
	if err := requireInfinibandParent(s.Parent, hwType); err != nil {
		return err
	}
	child := ipoibChild{
		ParentIndex: parent.Attrs().Index,
		Name:        s.Name,
		NetnsFd:     int(sess.pod.Fd()),
		PKey:        s.PKey,
		Mode:        mode,
		MTU:         s.MTU,
	}
	if _, err := sock.execute(child.request(), 0); err != nil {
		return fmt.Errorf("create ipoib child %s of %s (pkey %#04x, %s) in pod netns: %w (is the ib_ipoib module loaded?)",
			s.Name, s.Parent, s.PKey, mode.String(), err)
	}
	return nil
}
