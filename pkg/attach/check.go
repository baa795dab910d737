package attach

import (
	"errors"
	"fmt"
	"net"
	"net/netip"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// checkSession verifies that the pod interface of s is as s describes.
func checkSession(sess *session, s Spec) error {
	link, err := sess.podNL.LinkByName(s.Name)
	if err != nil {
		return fmt.Errorf("interface %s not found in pod netns %s: %w", s.Name, sess.podPath, err)
	}
	if err := checkIdentity(link, s); err != nil {
		return err
	}
	attrs := link.Attrs()
	if attrs.Flags&net.FlagUp == 0 {
		return fmt.Errorf("interface %s is down", s.Name)
	}
	if s.MTU > 0 && attrs.MTU != s.MTU {
		return fmt.Errorf("interface %s has MTU %d, want %d", s.Name, attrs.MTU, s.MTU)
	}
	checks := []func() error{
		func() error { return checkAddresses(sess, link, s) },
		func() error { return checkRoutes(sess, link, s) },
		func() error { return checkRules(sess, s) },
	}
	if s.ArpTuning {
		checks = append(checks, func() error { return checkARP(sess.pod, s.Name) })
	}
	for _, check := range checks {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

// checkIdentity verifies that link is the one rail made for s.
func checkIdentity(link netlink.Link, s Spec) error {
	rec, ok := parseAlias(link.Attrs().Alias)
	if !ok || !rec.belongsTo(s) {
		return fmt.Errorf("interface %s in pod is not rail's %s attachment of %s (alias %q)",
			s.Name, s.Mode, s.Parent, link.Attrs().Alias)
	}
	if movesNetdev(s.Mode) {
		return nil
	}
	if link.Type() != string(s.Mode) {
		return fmt.Errorf("interface %s is a %s link, want %s", s.Name, link.Type(), s.Mode)
	}
	if mv, isMacvlan := link.(*netlink.Macvlan); isMacvlan {
		want, err := macvlanModeOf(s.MacvlanMode)
		if err != nil {
			return err
		}
		if mv.Mode != want {
			return fmt.Errorf("macvlan %s is in mode %d, want %q", s.Name, mv.Mode, s.MacvlanMode)
		}
	}
	return nil
}

func checkAddresses(sess *session, link netlink.Link, s Spec) error {
	addrs, err := sess.podNL.AddrList(link, netlink.FAMILY_ALL)
	if err != nil && !errors.Is(err, netlink.ErrDumpInterrupted) {
		return fmt.Errorf("list addresses of %s: %w", s.Name, err)
	}
	have := map[netip.Prefix]bool{}
	for _, a := range addrs {
		if p, ok := ipNetToPrefix(a.IPNet); ok {
			have[p] = true
		}
	}
	for _, want := range s.Addresses {
		if !have[want] {
			return fmt.Errorf("address %s is missing on %s", want, s.Name)
		}
	}
	return nil
}

// checkRoutes verifies the listed routes and, with a policy table, each
// address's subnet route in that table.
func checkRoutes(sess *session, link netlink.Link, s Spec) error {
	table := s.Table
	if table == 0 {
		table = unix.RT_TABLE_MAIN
	}
	filter := &netlink.Route{LinkIndex: link.Attrs().Index, Table: table}
	routes, err := sess.podNL.RouteListFiltered(netlink.FAMILY_ALL, filter, netlink.RT_FILTER_OIF|netlink.RT_FILTER_TABLE)
	if err != nil {
		return fmt.Errorf("list routes of %s in table %d: %w", s.Name, table, err)
	}
	have := map[Route]bool{}
	for _, r := range routes {
		if rt, ok := specRouteOf(r); ok {
			have[rt] = true
		}
	}
	want := append([]Route(nil), s.Routes...)
	if s.Table > 0 {
		for _, a := range s.Addresses {
			want = append(want, Route{Dst: a.Masked()})
		}
	}
	for _, w := range want {
		if !have[w] {
			return fmt.Errorf("route %s is missing on %s in table %d", describeSpecRoute(w), s.Name, table)
		}
	}
	return nil
}

func checkRules(sess *session, s Spec) error {
	if s.Table == 0 {
		return nil
	}
	for _, a := range s.Addresses {
		want := sourceRule(a.Addr(), s.Table)
		rules, err := sess.podNL.RuleListFiltered(want.Family, want, netlink.RT_FILTER_SRC|netlink.RT_FILTER_TABLE)
		if err != nil {
			return fmt.Errorf("list rules: %w", err)
		}
		if len(rules) == 0 {
			return fmt.Errorf("rule from %s lookup %d is missing", a.Addr(), s.Table)
		}
	}
	return nil
}

// specRouteOf reduces a kernel route to the Route fields rail sets.
func specRouteOf(r netlink.Route) (Route, bool) {
	var rt Route
	if r.Dst == nil {
		rt.Dst = netip.PrefixFrom(netip.IPv4Unspecified(), 0)
		if r.Family == unix.AF_INET6 {
			rt.Dst = netip.PrefixFrom(netip.IPv6Unspecified(), 0)
		}
	} else if p, ok := ipNetToPrefix(r.Dst); ok {
		rt.Dst = p.Masked()
	} else {
		return Route{}, false
	}
	if r.Gw != nil {
		gw, ok := netip.AddrFromSlice(r.Gw)
		if !ok {
			return Route{}, false
		}
		rt.GW = gw.Unmap()
	}
	return rt, true
}

func ipNetToPrefix(n *net.IPNet) (netip.Prefix, bool) {
	if n == nil {
		return netip.Prefix{}, false
	}
	addr, ok := netip.AddrFromSlice(n.IP)
	if !ok {
		return netip.Prefix{}, false
	}
	addr = addr.Unmap()
	ones, bits := n.Mask.Size()
	if bits != addr.BitLen() {
		return netip.Prefix{}, false
	}
	return netip.PrefixFrom(addr, ones), true
}

func describeSpecRoute(r Route) string {
	if r.GW.IsValid() {
		return r.Dst.String() + " via " + r.GW.String()
	}
	return r.Dst.String()
}
