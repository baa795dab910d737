package nodenics

import (
	"errors"
	"fmt"
	"net"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// filteredUpTo is how many netdevs a read asks the kernel about one by
// one (an ADD's chosen NICs); beyond it one dump of the whole netns costs
// less (a rescan reads every NIC).
const filteredUpTo = 8

// readFiltered reads the addresses and routes of these links only, the
// kernel doing the filtering (NETLINK_GET_STRICT_CHK, kernel 4.20 and
// later): a node's netns holds an address and routes per pod on its host
// veths, and a whole-netns dump at each ADD reads and parses all of them.
// Without strict checking (errNotStrict) the caller dumps the whole netns.
func readFiltered(ns netns.NsHandle, h *netlink.Handle, links map[string]netlink.Link) (addrs []netlink.Addr, routes []netlink.Route, err error) {
	if err := h.SetStrictCheck(true); err != nil {
		return nil, nil, errNotStrict
	}
	sock, err := nl.GetNetlinkSocketAt(ns, netns.None(), unix.NETLINK_ROUTE)
	if err != nil {
		return nil, nil, fmt.Errorf("node NICs: netlink: %w", err)
	}
	defer sock.Close()
	if err := unix.SetsockoptInt(sock.GetFd(), unix.SOL_NETLINK, unix.NETLINK_GET_STRICT_CHK, 1); err != nil {
		return nil, nil, errNotStrict
	}
	for _, link := range links {
		index := link.Attrs().Index
		a, err := retryDump(func() ([]netlink.Addr, error) { return addrsOf(sock, index) })
		if err != nil {
			return nil, nil, fmt.Errorf("node NICs: list addresses of %s: %w", link.Attrs().Name, err)
		}
		addrs = append(addrs, a...)
		// LinkIndex puts RTA_OIF in the request, which the kernel matches
		// against every path of a multipath route; the library's own OIF
		// filter is not asked for: it would drop those (their LinkIndex is
		// 0). routeReasons keeps the routes leaving by the link.
		filter := &netlink.Route{LinkIndex: index, Table: unix.RT_TABLE_UNSPEC}
		r, err := retryDump(func() ([]netlink.Route, error) {
			return h.RouteListFiltered(netlink.FAMILY_ALL, filter, netlink.RT_FILTER_TABLE)
		})
		if err != nil {
			return nil, nil, fmt.Errorf("node NICs: list routes of %s: %w", link.Attrs().Name, err)
		}
		routes = append(routes, r...)
	}
	return addrs, routes, nil
}

// errNotStrict: the kernel cannot filter dumps (before 4.20); one dump of
// the whole netns then costs less than one per link.
var errNotStrict = errors.New("netlink strict checking not supported")

// addrsOf dumps the addresses of one link (RTM_GETADDR with its index;
// the kernel filters only under strict checking, so others are dropped
// here too).
func addrsOf(sock *nl.NetlinkSocket, index int) ([]netlink.Addr, error) {
	req := nl.NewNetlinkRequest(unix.RTM_GETADDR, unix.NLM_F_DUMP)
	msg := nl.NewIfAddrmsg(netlink.FAMILY_ALL)
	msg.Index = uint32(index)
	req.AddData(msg)
	req.Sockets = map[int]*nl.SocketHandle{unix.NETLINK_ROUTE: {Socket: sock}}
	msgs, err := req.Execute(unix.NETLINK_ROUTE, unix.RTM_NEWADDR)
	if err != nil {
		return nil, err
	}
	var out []netlink.Addr
	for _, m := range msgs {
		a, err := parseAddr(m)
		if err != nil {
			return nil, err
		}
		if a.LinkIndex == index {
			out = append(out, a)
		}
	}
	return out, nil
}

// parseAddr reads what the protection needs of one RTM_NEWADDR: the link,
// the scope and the address as `ip addr` shows it (IPv4 sends the local
// address as IFA_LOCAL and the peer, or the same address, as IFA_ADDRESS;
// IPv6 only IFA_ADDRESS).
func parseAddr(m []byte) (netlink.Addr, error) {
	if len(m) < unix.SizeofIfAddrmsg {
		return netlink.Addr{}, fmt.Errorf("short address message (%d bytes)", len(m))
	}
	msg := nl.DeserializeIfAddrmsg(m)
	attrs, err := nl.ParseRouteAttr(m[msg.Len():])
	if err != nil {
		return netlink.Addr{}, err
	}
	var local, dst net.IP
	for _, attr := range attrs {
		switch attr.Attr.Type {
		case unix.IFA_ADDRESS:
			dst = net.IP(attr.Value)
		case unix.IFA_LOCAL:
			local = net.IP(attr.Value)
		}
	}
	a := netlink.Addr{LinkIndex: int(msg.Index), Scope: int(msg.Scope)}
	switch {
	case local != nil && (dst == nil || !local.Equal(dst)):
		a.IPNet = &net.IPNet{IP: local, Mask: net.CIDRMask(8*len(local), 8*len(local))}
	case dst != nil:
		a.IPNet = &net.IPNet{IP: dst, Mask: net.CIDRMask(int(msg.Prefixlen), 8*len(dst))}
	}
	return a, nil
}
