package attach

import (
	"fmt"
	"net"
	"sort"
	"strings"
	"testing"

	"github.com/containernetworking/plugins/pkg/ns"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// snapshot describes the links, addresses, routes (all tables) and rules of
// a netns as sorted text, so "left as before" is a string comparison.
// IPv6 link-local and multicast entries are left out: the kernel creates
// them by itself whenever a link comes up.
func snapshot(t testing.TB, n ns.NetNS) string {
	t.Helper()
	h := handle(t, n)
	links, err := h.LinkList()
	if err != nil {
		t.Fatalf("list links: %v", err)
	}
	names := map[int]string{}
	var lines []string
	for _, l := range links {
		a := l.Attrs()
		names[a.Index] = a.Name
		lines = append(lines, fmt.Sprintf("link %s type=%s mtu=%d up=%v alias=%q", a.Name, l.Type(), a.MTU, isUp(l), a.Alias))
	}
	addrs, err := h.AddrList(nil, netlink.FAMILY_ALL)
	if err != nil {
		t.Fatalf("list addresses: %v", err)
	}
	for _, a := range addrs {
		if !selfMade(a.IP) {
			lines = append(lines, fmt.Sprintf("addr %s dev %s", a.IPNet, names[a.LinkIndex]))
		}
	}
	routes, err := h.RouteListFiltered(netlink.FAMILY_ALL, &netlink.Route{Table: unix.RT_TABLE_UNSPEC}, netlink.RT_FILTER_TABLE)
	if err != nil {
		t.Fatalf("list routes: %v", err)
	}
	for _, r := range routes {
		if r.Dst != nil && selfMade(r.Dst.IP) {
			continue
		}
		lines = append(lines, fmt.Sprintf("route table=%d dst=%v gw=%v dev=%s", r.Table, r.Dst, r.Gw, names[r.LinkIndex]))
	}
	rules, err := h.RuleList(netlink.FAMILY_ALL)
	if err != nil {
		t.Fatalf("list rules: %v", err)
	}
	for _, r := range rules {
		lines = append(lines, fmt.Sprintf("rule prio=%d src=%v table=%d", r.Priority, r.Src, r.Table))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

func selfMade(ip net.IP) bool {
	return ip.To4() == nil && (ip.IsLinkLocalUnicast() || ip.IsMulticast())
}

// assertSame fails when the netns changed since before was taken.
func assertSame(t testing.TB, what string, n ns.NetNS, before string) {
	t.Helper()
	if after := snapshot(t, n); after != before {
		t.Errorf("%s changed:\n--- before\n%s\n--- after\n%s", what, before, after)
	}
}
