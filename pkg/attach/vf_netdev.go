package attach

import (
	"net"

	"github.com/containernetworking/plugins/pkg/netlinksafe"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"

	"github.com/railcni/rail/pkg/vfnetdev"
)

// vfNode is the host side vfnetdev's steps act on in a session: the PF's
// control, the host netns's links and sysfs (and the tests' models of a
// VF driver and of the kernel's rebind).
func (a attacher) vfNode(sess *session) vfnetdev.Node {
	return vfnetdev.Node{PF: a.pfControl(sess), Links: hostLinks{h: sess.hostNL, setMAC: a.setMAC}, Root: a.root(), Rebind: a.rebind}
}

// hostLinks is vfnetdev.Links on the session's host netlink handle.
type hostLinks struct {
	h      netlinksafe.Handle
	setMAC func(netlink.Link, net.HardwareAddr) error // nil: netlink
}

func (l hostLinks) LinkByName(name string) (netlink.Link, error) { return l.h.LinkByName(name) }
func (l hostLinks) LinkByIndex(index int) (netlink.Link, error)  { return l.h.LinkByIndex(index) }
func (l hostLinks) LinkSetUp(link netlink.Link) error            { return l.h.LinkSetUp(link) }
func (l hostLinks) LinkSetDown(link netlink.Link) error          { return l.h.LinkSetDown(link) }

func (l hostLinks) SetMAC(link netlink.Link, mac net.HardwareAddr) error {
	if l.setMAC != nil {
		return l.setMAC(link, mac)
	}
	return l.h.LinkSetHardwareAddr(link, mac)
}

// Change renames the link and sets its MTU in one RTM_NEWLINK.
func (l hostLinks) Change(index int, name string, mtu int) error {
	sock, err := openRouteSocket(netns.None())
	if err != nil {
		return err
	}
	defer sock.close()
	return sock.changeLink(linkChange{Index: index, NetnsFd: -1, Name: name, MTU: mtu})
}

func (a attacher) root() string {
	if a.sysRoot == "" {
		return "/"
	}
	return a.sysRoot
}
