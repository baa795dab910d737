// Package nodenics finds the node's own NICs: the RDMA NICs whose netdev
// carries the host's addresses or routes, read with netlink in the host
// netns, added to what sysfs shows of their links (enslaved, uppers, bond
// master: topology.NIC.LinkProtection). Placement never moves such a NIC
// and uses it in child modes only where the config shares it.
package nodenics

import (
	"errors"
	"fmt"
	"net"
	"net/netip"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/railcni/rail/pkg/topology"
)

// Reader reads the protection of NICs in one netns.
type Reader struct {
	// NS is the netns whose addresses and routes count (netns.None(): the
	// caller's, the host netns for raild).
	NS netns.NsHandle
	// NodeIPs are the node's InternalIPs from its Node object (none
	// without an API connection): an address among them is named so.
	NodeIPs []netip.Addr
	// Shared are the NICs the config shares in child modes
	// (allowProtectedNICs, resolved to NIC names).
	Shared map[string]bool

	wholeDump bool // read the whole netns even for a few NICs (tests of both paths)
}

// All reads the protection of every NIC of m: one dump of the netns's
// addresses and one of its routes. NICs with no reason are left out.
func (r Reader) All(m *topology.Machine) (map[string]topology.Protection, error) {
	return r.Of(m.NICs)
}

// Of reads the protection of these NICs now (an ADD checks the NICs it
// chose): what sysfs showed of their links at the last rescan, and their
// netdevs' master, bonding, addresses and routes as netlink shows them
// now. A netdev the netns does not have (moved into a pod) has nothing of
// the host's. NICs with no reason are left out.
func (r Reader) Of(nics []topology.NIC) (map[string]topology.Protection, error) {
	h, err := r.handle()
	if err != nil {
		return nil, err
	}
	defer h.Close()
	hn, err := r.readHost(h, nics)
	if err != nil {
		return nil, err
	}
	out := map[string]topology.Protection{}
	for _, nic := range nics {
		p := nic.LinkProtection()
		if link, ok := hn.links[nic.Netdev]; ok {
			p.Add(hn.linkReasons(link, p)...)
			p.Add(hn.addressReasons(link.Attrs().Index, r.NodeIPs)...)
			p.Add(hn.routeReasons(link.Attrs().Index)...)
		}
		if !p.Protected() {
			continue
		}
		p.Shared = r.Shared[nic.Name]
		out[nic.Name] = p
	}
	return out, nil
}

func (r Reader) handle() (*netlink.Handle, error) {
	var h *netlink.Handle
	var err error
	if r.NS.IsOpen() {
		h, err = netlink.NewHandleAt(r.NS, unix.NETLINK_ROUTE)
	} else {
		h, err = netlink.NewHandle(unix.NETLINK_ROUTE)
	}
	if err != nil {
		return nil, fmt.Errorf("node NICs: netlink: %w", err)
	}
	return h, nil
}

// hostNet is what one read found: the NICs' netdevs, every address and
// every route of the netns.
type hostNet struct {
	links  map[string]netlink.Link // by name; only the NICs' netdevs
	names  map[int]string          // link index -> name, for masters
	addrs  []netlink.Addr
	routes []netlink.Route
}

func (r Reader) readHost(h *netlink.Handle, nics []topology.NIC) (*hostNet, error) {
	hn := &hostNet{links: map[string]netlink.Link{}, names: map[int]string{}}
	for _, nic := range nics {
		if nic.Netdev == "" || hn.links[nic.Netdev] != nil {
			continue
		}
		link, err := h.LinkByName(nic.Netdev)
		var notFound netlink.LinkNotFoundError
		switch {
		case errors.As(err, &notFound):
			continue // not in this netns: a pod holds it
		case err != nil:
			return nil, fmt.Errorf("node NICs: netdev %s of %s: %w", nic.Netdev, nic.Name, err)
		}
		hn.links[nic.Netdev] = link
	}
	if len(hn.links) == 0 {
		return hn, nil
	}
	var err error
	if len(hn.links) <= filteredUpTo && !r.wholeDump {
		hn.addrs, hn.routes, err = readFiltered(r.NS, h, hn.links)
		if err == nil {
			return hn.withMasters(h), nil
		}
		if !errors.Is(err, errNotStrict) {
			return nil, err
		}
	}
	if hn.addrs, err = retryDump(func() ([]netlink.Addr, error) { return h.AddrList(nil, netlink.FAMILY_ALL) }); err != nil {
		return nil, fmt.Errorf("node NICs: list addresses: %w", err)
	}
	filter := &netlink.Route{Table: unix.RT_TABLE_UNSPEC}
	if hn.routes, err = retryDump(func() ([]netlink.Route, error) {
		return h.RouteListFiltered(netlink.FAMILY_ALL, filter, netlink.RT_FILTER_TABLE)
	}); err != nil {
		return nil, fmt.Errorf("node NICs: list routes: %w", err)
	}
	return hn.withMasters(h), nil
}

// withMasters names the links and their masters, for the reasons' text.
func (hn *hostNet) withMasters(h *netlink.Handle) *hostNet {
	for _, link := range hn.links {
		hn.names[link.Attrs().Index] = link.Attrs().Name
		if idx := link.Attrs().MasterIndex; idx != 0 {
			if master, err := h.LinkByIndex(idx); err == nil {
				hn.names[idx] = master.Attrs().Name
			}
		}
	}
	return hn
}

// retryDump repeats a dump the kernel interrupted (its table changed
// meanwhile), a few times; the last answer stands.
func retryDump[T any](dump func() ([]T, error)) ([]T, error) {
	var out []T
	var err error
	for range 5 {
		out, err = dump()
		if !errors.Is(err, netlink.ErrDumpInterrupted) {
			break
		}
	}
	return out, err
}

// linkReasons are what netlink shows of the netdev's place now, beyond
// what sysfs showed at the last rescan (p): a master, being a bond.
func (hn *hostNet) linkReasons(link netlink.Link, p topology.Protection) []topology.ProtectReason {
	var out []topology.ProtectReason
	if idx := link.Attrs().MasterIndex; idx != 0 && !p.Has(topology.ProtectEnslaved) {
		master, ok := hn.names[idx]
		if !ok {
			master = fmt.Sprintf("link %d", idx)
		}
		out = append(out, topology.ProtectReason{Kind: topology.ProtectEnslaved, Detail: master})
	}
	if link.Type() == "bond" && !p.Has(topology.ProtectBondMaster) {
		out = append(out, topology.ProtectReason{Kind: topology.ProtectBondMaster, Detail: link.Attrs().Name})
	}
	return out
}

// addressReasons are the netdev's global addresses; the node's
// InternalIP is named as such.
func (hn *hostNet) addressReasons(index int, nodeIPs []netip.Addr) []topology.ProtectReason {
	var out []topology.ProtectReason
	for _, a := range hn.addrs {
		if a.LinkIndex != index || a.IPNet == nil || !global(a) {
			continue
		}
		ip, _ := netip.AddrFromSlice(a.IP)
		kind := topology.ProtectAddress
		for _, n := range nodeIPs {
			if n.Unmap() == ip.Unmap() {
				kind = topology.ProtectNodeIP
			}
		}
		out = append(out, topology.ProtectReason{Kind: kind, Detail: a.IPNet.String()})
	}
	return out
}

// global is an address the host uses beyond the link: not link-local, not
// host-scoped.
func global(a netlink.Addr) bool {
	return a.Scope == unix.RT_SCOPE_UNIVERSE && !a.IP.IsLinkLocalUnicast() && !a.IP.IsLoopback()
}

// routeReasons are the routes leaving by the netdev (alone or as one
// path of a multipath route), outside the local table and IPv6's own
// link-local and multicast routes; the default route is named as such.
func (hn *hostNet) routeReasons(index int) []topology.ProtectReason {
	var out []topology.ProtectReason
	for _, rt := range hn.routes {
		if !leavesBy(rt, index) || !hostRoute(rt) {
			continue
		}
		kind := topology.ProtectRoute
		if isDefault(rt.Dst) {
			kind = topology.ProtectDefaultRoute
		}
		out = append(out, topology.ProtectReason{Kind: kind, Detail: hn.describe(rt)})
	}
	return out
}

func leavesBy(rt netlink.Route, index int) bool {
	if rt.LinkIndex == index {
		return true
	}
	for _, nh := range rt.MultiPath {
		if nh.LinkIndex == index {
			return true
		}
	}
	return false
}

// hostRoute reports whether a route is one the host uses beyond the
// link's own plumbing.
func hostRoute(rt netlink.Route) bool {
	if rt.Table == unix.RT_TABLE_LOCAL || (rt.Type != 0 && rt.Type != unix.RTN_UNICAST) {
		return false
	}
	if rt.Dst != nil && (rt.Dst.IP.IsLinkLocalUnicast() || rt.Dst.IP.IsMulticast()) {
		return false
	}
	return true
}

func isDefault(dst *net.IPNet) bool {
	if dst == nil {
		return true
	}
	ones, _ := dst.Mask.Size()
	return ones == 0 && dst.IP.IsUnspecified()
}

// describe spells a route as ip route does: "default via 10.0.0.1 dev
// eth0", with the table when it is not main.
func (hn *hostNet) describe(rt netlink.Route) string {
	text := "default"
	if !isDefault(rt.Dst) {
		text = rt.Dst.String()
	}
	if rt.Gw != nil {
		text += " via " + rt.Gw.String()
	}
	if name, ok := hn.names[rt.LinkIndex]; ok {
		text += " dev " + name
	}
	if rt.Table != 0 && rt.Table != unix.RT_TABLE_MAIN {
		text += fmt.Sprintf(" table %d", rt.Table)
	}
	return text
}
