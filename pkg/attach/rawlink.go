package attach

import (
	"fmt"

	"github.com/vishvananda/netlink/nl"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// routeSocket is a NETLINK_ROUTE socket opened in one netns, for requests
// that vishvananda/netlink cannot express as one message.
type routeSocket struct {
	sh *nl.SocketHandle
}

// openRouteSocket opens a NETLINK_ROUTE socket inside at; netns.None()
// means the calling thread's netns.
func openRouteSocket(at netns.NsHandle) (*routeSocket, error) {
	s, err := nl.GetNetlinkSocketAt(at, netns.None(), unix.NETLINK_ROUTE)
	if err != nil {
		return nil, fmt.Errorf("open route netlink socket: %w", err)
	}
	if err := s.SetSendTimeout(&nl.SocketTimeoutTv); err != nil {
		s.Close()
		return nil, fmt.Errorf("set netlink send timeout: %w", err)
	}
	if err := s.SetReceiveTimeout(&nl.SocketTimeoutTv); err != nil {
		s.Close()
		return nil, fmt.Errorf("set netlink receive timeout: %w", err)
	}
	return &routeSocket{sh: &nl.SocketHandle{Socket: s}}, nil
}

func (r *routeSocket) close() { r.sh.Close() }

// execute sends req on this socket and returns the kernel's answers.
func (r *routeSocket) execute(req *nl.NetlinkRequest, resType uint16) ([][]byte, error) {
	req.Sockets = map[int]*nl.SocketHandle{unix.NETLINK_ROUTE: r.sh}
	return req.Execute(unix.NETLINK_ROUTE, resType)
}

// linkChange is one RTM_NEWLINK for an existing link: it can move the link
// to another netns, rename it, set or clear its alias and set its MTU in a
// single message. The kernel moves first, then renames inside the target.
type linkChange struct {
	Index   int     // ifindex in the netns the request is sent from
	NetnsFd int     // target netns fd; -1 stays in the same netns
	Name    string  // new name; "" keeps it
	Alias   *string // new alias; nil keeps it, "" clears it
	MTU     int     // new MTU; 0 keeps it
}

func (c linkChange) request() *nl.NetlinkRequest {
	req := nl.NewNetlinkRequest(unix.RTM_NEWLINK, unix.NLM_F_ACK)
	msg := nl.NewIfInfomsg(unix.AF_UNSPEC)
	msg.Index = int32(c.Index)
	req.AddData(msg)
	if c.NetnsFd >= 0 {
		req.AddData(nl.NewRtAttr(unix.IFLA_NET_NS_FD, nl.Uint32Attr(uint32(c.NetnsFd))))
	}
	if c.Name != "" {
		req.AddData(nl.NewRtAttr(unix.IFLA_IFNAME, nl.ZeroTerminated(c.Name)))
	}
	if c.Alias != nil {
		req.AddData(nl.NewRtAttr(unix.IFLA_IFALIAS, []byte(*c.Alias)))
	}
	if c.MTU > 0 {
		req.AddData(nl.NewRtAttr(unix.IFLA_MTU, nl.Uint32Attr(uint32(c.MTU))))
	}
	return req
}

func (r *routeSocket) changeLink(c linkChange) error {
	_, err := r.execute(c.request(), 0)
	return err
}

// hardwareType returns the ARPHRD_* type of the link with ifindex index
// (1 Ethernet, 32 InfiniBand), read from the netns of this socket.
func (r *routeSocket) hardwareType(index int) (uint16, error) {
	req := nl.NewNetlinkRequest(unix.RTM_GETLINK, unix.NLM_F_ACK)
	msg := nl.NewIfInfomsg(unix.AF_UNSPEC)
	msg.Index = int32(index)
	req.AddData(msg)
	msgs, err := r.execute(req, unix.RTM_NEWLINK)
	if err != nil {
		return 0, fmt.Errorf("get link %d: %w", index, err)
	}
	if len(msgs) != 1 || len(msgs[0]) < unix.SizeofIfInfomsg {
		return 0, fmt.Errorf("get link %d: unexpected answer (%d messages)", index, len(msgs))
	}
	return nl.DeserializeIfInfomsg(msgs[0]).Type, nil
}

func stringPtr(s string) *string { return &s }
