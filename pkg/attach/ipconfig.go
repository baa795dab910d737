package attach

import (
	"errors"
	"fmt"
	"net"
	"net/netip"

	"github.com/containernetworking/plugins/pkg/netlinksafe"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// configureInterface applies the layer-3 part of s to link, which lives in
// the pod netns of sess: ARP tuning, addresses, link up, the policy table's
// subnet routes, the listed routes and the source rules. Each step pushes
// its inverse on undo.
func configureInterface(sess *session, link netlink.Link, s Spec, undo *undoList) error {
	h := sess.podNL
	name := link.Attrs().Name
	if s.ArpTuning {
		if err := tuneARP(sess.pod, name, undo); err != nil {
			return err
		}
	}
	for _, a := range s.Addresses {
		if err := addAddress(h, link, a, undo); err != nil {
			return err
		}
	}
	if err := h.LinkSetUp(link); err != nil {
		return fmt.Errorf("set %s up in pod: %w", name, err)
	}
	undo.push("set "+name+" up", func() error { return h.LinkSetDown(link) })
	if s.Table > 0 {
		for _, a := range s.Addresses {
			if err := addRoute(h, subnetRoute(link.Attrs().Index, a, s.Table), name, undo); err != nil {
				return err
			}
		}
	}
	for _, r := range s.Routes {
		if err := addRoute(h, specRoute(link.Attrs().Index, r, s.Table), name, undo); err != nil {
			return err
		}
	}
	if s.Table > 0 {
		for _, a := range s.Addresses {
			if err := addSourceRule(h, a.Addr(), s.Table, undo); err != nil {
				return err
			}
		}
	}
	return nil
}

func addAddress(h netlinksafe.Handle, link netlink.Link, a netip.Prefix, undo *undoList) error {
	addr := netlinkAddr(a)
	if err := h.AddrAdd(link, addr); err != nil {
		return fmt.Errorf("add address %s to %s in pod: %w", a, link.Attrs().Name, err)
	}
	undo.push("address "+a.String(), func() error { return ignoreGone(h.AddrDel(link, addr)) })
	return nil
}

func addRoute(h netlinksafe.Handle, rt *netlink.Route, ifName string, undo *undoList) error {
	if err := h.RouteAdd(rt); err != nil {
		return fmt.Errorf("add route %s on %s in pod: %w", describeRoute(rt), ifName, err)
	}
	undo.push("route "+describeRoute(rt), func() error { return ignoreGone(h.RouteDel(rt)) })
	return nil
}

func addSourceRule(h netlinksafe.Handle, addr netip.Addr, table int, undo *undoList) error {
	rule := sourceRule(addr, table)
	if err := h.RuleAdd(rule); err != nil {
		return fmt.Errorf("add rule from %s lookup %d in pod: %w", addr, table, err)
	}
	undo.push(fmt.Sprintf("rule from %s lookup %d", addr, table), func() error { return ignoreGone(h.RuleDel(rule)) })
	return nil
}

// removeSourceRules deletes every source rule ("from <host address>
// lookup <table>") that points at table, the interface's own policy routing
// table. This needs no address: an IPv6 address may already be gone (the
// kernel drops them when a link goes down) while its rule is not.
func removeSourceRules(h netlinksafe.Handle, table int) error {
	if table <= 0 {
		return nil
	}
	filter := &netlink.Rule{Table: table}
	rules, err := h.RuleListFiltered(netlink.FAMILY_ALL, filter, netlink.RT_FILTER_TABLE)
	if err != nil {
		return fmt.Errorf("list rules for table %d: %w", table, err)
	}
	var errs []error
	for _, r := range rules {
		p, ok := ipNetToPrefix(r.Src)
		if !ok || p.Bits() != p.Addr().BitLen() {
			continue
		}
		if err := ignoreGone(h.RuleDel(sourceRule(p.Addr(), table))); err != nil {
			errs = append(errs, fmt.Errorf("delete rule from %s lookup %d: %w", p.Addr(), table, err))
		}
	}
	return errors.Join(errs...)
}

// removeAddresses deletes the addresses of s from link; absent ones are fine.
func removeAddresses(h netlinksafe.Handle, link netlink.Link, s Spec) error {
	var errs []error
	for _, a := range s.Addresses {
		if err := ignoreGone(h.AddrDel(link, netlinkAddr(a))); err != nil {
			errs = append(errs, fmt.Errorf("delete address %s from %s: %w", a, link.Attrs().Name, err))
		}
	}
	return errors.Join(errs...)
}

func netlinkAddr(a netip.Prefix) *netlink.Addr {
	addr := &netlink.Addr{IPNet: prefixToIPNet(a)}
	if a.Addr().Is6() {
		addr.Flags = unix.IFA_F_NODAD
	}
	return addr
}

// subnetRoute is the connected route of address a, placed in table.
func subnetRoute(linkIndex int, a netip.Prefix, table int) *netlink.Route {
	return &netlink.Route{
		LinkIndex: linkIndex,
		Dst:       prefixToIPNet(a.Masked()),
		Src:       a.Addr().AsSlice(),
		Scope:     netlink.SCOPE_LINK,
		Table:     table,
	}
}

// specRoute is a route from Spec.Routes; table 0 means main.
func specRoute(linkIndex int, r Route, table int) *netlink.Route {
	rt := &netlink.Route{LinkIndex: linkIndex, Dst: prefixToIPNet(r.Dst), Table: table}
	if r.GW.IsValid() {
		rt.Gw = r.GW.AsSlice()
	} else {
		rt.Scope = netlink.SCOPE_LINK
	}
	return rt
}

func sourceRule(addr netip.Addr, table int) *netlink.Rule {
	rule := netlink.NewRule()
	rule.Src = prefixToIPNet(netip.PrefixFrom(addr, addr.BitLen()))
	rule.Table = table
	rule.Family = unix.AF_INET
	if addr.Is6() {
		rule.Family = unix.AF_INET6
	}
	return rule
}

func prefixToIPNet(p netip.Prefix) *net.IPNet {
	return &net.IPNet{IP: p.Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())}
}

func describeRoute(rt *netlink.Route) string {
	s := rt.Dst.String()
	if rt.Gw != nil {
		s += " via " + rt.Gw.String()
	}
	if rt.Table > 0 {
		s += fmt.Sprintf(" table %d", rt.Table)
	}
	return s
}

// ignoreGone turns "it is not there" answers from the kernel into nil, for
// inverses and Detach, which must not fail for something already gone.
func ignoreGone(err error) error {
	var notFound netlink.LinkNotFoundError
	switch {
	case err == nil, errors.Is(err, unix.ENOENT), errors.Is(err, unix.ESRCH),
		errors.Is(err, unix.EADDRNOTAVAIL), errors.Is(err, unix.ENODEV), errors.As(err, &notFound):
		return nil
	}
	return err
}
