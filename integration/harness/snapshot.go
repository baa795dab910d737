package harness

import (
	"errors"
	"fmt"
	"net"
	"sort"
	"strings"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// Snapshot is what a netns holds, one line per link, address, route and
// rule, keyed by names (never by ifindex, which a device moved out and
// back may not keep).
type Snapshot struct {
	Links, Addrs, Routes, Rules []string
}

// TakeSnapshot reads links, addresses, routes of every table and policy
// rules of netns.
func TakeSnapshot(netns *NetNS) (Snapshot, error) {
	h, err := netns.Netlink()
	if err != nil {
		return Snapshot{}, err
	}
	defer h.Close()
	links, err := retryDump(h.LinkList)
	if err != nil {
		return Snapshot{}, fmt.Errorf("snapshot %s: links: %w", netns.Name, err)
	}
	names := map[int]string{}
	var s Snapshot
	for _, l := range links {
		names[l.Attrs().Index] = l.Attrs().Name
		s.Links = append(s.Links, describeLink(l))
	}
	steps := []func(*netlink.Handle, map[int]string, *Snapshot) error{snapAddrs, snapRoutes, snapRules}
	for _, step := range steps {
		if err := step(h, names, &s); err != nil {
			return Snapshot{}, fmt.Errorf("snapshot %s: %w", netns.Name, err)
		}
	}
	s.sort()
	return s, nil
}

// retryDump repeats a netlink dump the kernel interrupted (it changed
// while being read).
func retryDump[T any](dump func() ([]T, error)) ([]T, error) {
	for i := 0; ; i++ {
		out, err := dump()
		if err == nil || !errors.Is(err, netlink.ErrDumpInterrupted) || i == 10 {
			return out, err
		}
	}
}

func describeLink(l netlink.Link) string {
	a := l.Attrs()
	return fmt.Sprintf("link %s type=%s mtu=%d up=%v oper=%s mac=%s alias=%q",
		a.Name, l.Type(), a.MTU, a.Flags&net.FlagUp != 0, a.OperState, a.HardwareAddr, a.Alias)
}

func snapAddrs(h *netlink.Handle, names map[int]string, s *Snapshot) error {
	addrs, err := retryDump(func() ([]netlink.Addr, error) { return h.AddrList(nil, netlink.FAMILY_ALL) })
	if err != nil {
		return fmt.Errorf("addresses: %w", err)
	}
	for _, a := range addrs {
		if kernelLinkLocal(a.IPNet) {
			continue
		}
		s.Addrs = append(s.Addrs, fmt.Sprintf("addr %s dev %s", a.IPNet, names[a.LinkIndex]))
	}
	return nil
}

func snapRoutes(h *netlink.Handle, names map[int]string, s *Snapshot) error {
	filter := &netlink.Route{Table: unix.RT_TABLE_UNSPEC}
	routes, err := retryDump(func() ([]netlink.Route, error) {
		return h.RouteListFiltered(netlink.FAMILY_ALL, filter, netlink.RT_FILTER_TABLE)
	})
	if err != nil {
		return fmt.Errorf("routes: %w", err)
	}
	for _, r := range routes {
		if kernelLinkLocal(r.Dst) {
			continue
		}
		s.Routes = append(s.Routes, fmt.Sprintf("route table=%d type=%d dst=%v gw=%v src=%v dev=%s scope=%d proto=%d",
			r.Table, r.Type, r.Dst, r.Gw, r.Src, names[r.LinkIndex], r.Scope, r.Protocol))
	}
	return nil
}

// kernelLinkLocal: IPv6 link-local addresses and their routes are the
// kernel's own, made whenever a link comes up, at a moment that depends on
// carrier and DAD; rail never makes or removes them, and a leaked link
// shows in the link lines anyway.
func kernelLinkLocal(n *net.IPNet) bool {
	return n != nil && n.IP.To4() == nil && n.IP.IsLinkLocalUnicast()
}

func snapRules(h *netlink.Handle, _ map[int]string, s *Snapshot) error {
	rules, err := retryDump(func() ([]netlink.Rule, error) { return h.RuleList(netlink.FAMILY_ALL) })
	if err != nil {
		return fmt.Errorf("rules: %w", err)
	}
	for _, r := range rules {
		s.Rules = append(s.Rules, fmt.Sprintf("rule family=%d prio=%d table=%d src=%v dst=%v iif=%s oif=%s mark=%d",
			r.Family, r.Priority, r.Table, r.Src, r.Dst, r.IifName, r.OifName, r.Mark))
	}
	return nil
}

func (s *Snapshot) sort() {
	for _, list := range [][]string{s.Links, s.Addrs, s.Routes, s.Rules} {
		sort.Strings(list)
	}
}

// Diff lists what changed from s to other: "- line" for what is gone,
// "+ line" for what is new. Empty means equal.
func (s Snapshot) Diff(other Snapshot) []string {
	var out []string
	pairs := [][2][]string{{s.Links, other.Links}, {s.Addrs, other.Addrs}, {s.Routes, other.Routes}, {s.Rules, other.Rules}}
	for _, p := range pairs {
		out = append(out, diffLines(p[0], p[1])...)
	}
	return out
}

func diffLines(before, after []string) []string {
	count := map[string]int{}
	for _, l := range before {
		count[l]++
	}
	for _, l := range after {
		count[l]--
	}
	var out []string
	for _, l := range before {
		if count[l] > 0 {
			out = append(out, "- "+l)
			count[l]--
		}
	}
	for _, l := range after {
		if count[l] < 0 {
			out = append(out, "+ "+l)
			count[l]++
		}
	}
	return out
}

// WaitSame re-reads netns until it equals want, for up to timeout (the
// kernel finishes some changes asynchronously: IPv6 link-local addresses,
// carrier after a device comes back). It returns the last difference.
func WaitSame(netns *NetNS, want Snapshot, timeout time.Duration) ([]string, error) {
	deadline := time.Now().Add(timeout)
	for {
		got, err := TakeSnapshot(netns)
		if err != nil {
			return nil, err
		}
		diff := want.Diff(got)
		if len(diff) == 0 || time.Now().After(deadline) {
			return diff, nil
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// String prints the snapshot, one line each.
func (s Snapshot) String() string {
	var b strings.Builder
	for _, list := range [][]string{s.Links, s.Addrs, s.Routes, s.Rules} {
		for _, l := range list {
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	return b.String()
}
