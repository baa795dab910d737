package attach

import (
	"net/netip"
	"testing"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

func prefixes(ss ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParsePrefix(s)
	}
	return out
}

func route(dst, gw string) Route {
	r := Route{Dst: netip.MustParsePrefix(dst)}
	if gw != "" {
		r.GW = netip.MustParseAddr(gw)
	}
	return r
}

func TestMoveAttachDetach(t *testing.T) {
	tests := []struct {
		name   string
		nicMTU int
		nicUp  bool
		spec   Spec
	}{
		{"ipv4 keeps the device mtu", 1500, true, Spec{
			Name: "rail0", Addresses: prefixes("10.10.0.5/24")}},
		{"mtu change on a host-down nic with a gateway route", 1400, false, Spec{
			Name: "rail0", MTU: 9000, Addresses: prefixes("10.10.0.5/24"),
			Routes: []Route{route("10.20.0.0/16", "10.10.0.1")}}},
		{"policy table and arp tuning", 1500, true, Spec{
			Name: "rail1", Table: 101, ArpTuning: true, Addresses: prefixes("10.10.0.6/24"),
			Routes: []Route{route("10.30.0.0/16", "10.10.0.1"), route("10.40.0.0/24", "")}}},
		{"dual stack in a table", 1500, true, Spec{
			Name: "net1-1", Table: 102, Addresses: prefixes("10.10.0.7/24", "fd00:10::7/64"),
			Routes: []Route{route("fd00:20::/64", "fd00:10::1"), route("10.50.0.0/16", "10.10.0.1")}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newTestEnv(t)
			s := tt.spec
			s.Mode = ModeMove
			s.Parent = e.addNIC(tt.nicMTU, tt.nicUp)
			hostBefore, podBefore := snapshot(t, e.host), snapshot(t, e.pod)

			res, err := e.attach(s)
			if err != nil {
				t.Fatalf("Attach: %v", err)
			}
			if linkIn(t, e.host, s.Parent) != nil {
				t.Errorf("%s is still in the host netns", s.Parent)
			}
			podLink := mustLinkIn(t, e.pod, s.Name)
			assertMovedLink(t, podLink, res, s, tt.nicMTU, tt.nicUp)
			assertLayer3(t, e, podLink, s)
			if err := e.check(s); err != nil {
				t.Errorf("Check after Attach: %v", err)
			}

			if err := e.detach(s); err != nil {
				t.Fatalf("Detach: %v", err)
			}
			assertSame(t, "host netns after Detach", e.host, hostBefore)
			assertSame(t, "pod netns after Detach", e.pod, podBefore)
			if err := e.detach(s); err != nil {
				t.Fatalf("second Detach: %v", err)
			}
			assertSame(t, "host netns after the second Detach", e.host, hostBefore)
		})
	}
}

func assertMovedLink(t *testing.T, l netlink.Link, res Result, s Spec, nicMTU int, nicUp bool) {
	t.Helper()
	a := l.Attrs()
	wantMTU := nicMTU
	if s.MTU > 0 {
		wantMTU = s.MTU
	}
	if a.MTU != wantMTU || !isUp(l) {
		t.Errorf("pod link: mtu %d up %v, want mtu %d up", a.MTU, isUp(l), wantMTU)
	}
	rec, ok := parseAlias(a.Alias)
	want := aliasRecord{Host: s.Parent, Name: s.Name, MTU: nicMTU, Up: nicUp, Table: s.Table}
	if !ok || rec != want {
		t.Errorf("pod link alias %q = %+v, want %+v", a.Alias, rec, want)
	}
	wantRes := Result{Name: s.Name, MAC: a.HardwareAddr.String(), MTU: wantMTU, Index: a.Index}
	if res != wantRes {
		t.Errorf("Result = %+v, want %+v", res, wantRes)
	}
}

// assertLayer3 checks addresses, routes, rules and sysctls in the pod
// directly through netlink and /proc, independently of Check.
func assertLayer3(t *testing.T, e *testEnv, l netlink.Link, s Spec) {
	t.Helper()
	h := handle(t, e.pod)
	addrs, err := h.AddrList(l, netlink.FAMILY_ALL)
	if err != nil {
		t.Fatalf("list addresses: %v", err)
	}
	for _, want := range s.Addresses {
		found := false
		for _, a := range addrs {
			if p, _ := ipNetToPrefix(a.IPNet); p == want {
				found = true
				if want.Addr().Is6() && a.Flags&unix.IFA_F_TENTATIVE != 0 {
					t.Errorf("address %s is tentative: DAD was not skipped", want)
				}
			}
		}
		if !found {
			t.Errorf("address %s missing in pod", want)
		}
	}
	table := s.Table
	if table == 0 {
		table = unix.RT_TABLE_MAIN
	}
	routes, err := h.RouteListFiltered(netlink.FAMILY_ALL, &netlink.Route{Table: unix.RT_TABLE_UNSPEC}, netlink.RT_FILTER_TABLE)
	if err != nil {
		t.Fatalf("list routes: %v", err)
	}
	have := map[Route]map[int]bool{} // route -> tables holding it
	for _, r := range routes {
		rt, ok := specRouteOf(r)
		if ok && r.LinkIndex == l.Attrs().Index {
			if have[rt] == nil {
				have[rt] = map[int]bool{}
			}
			have[rt][r.Table] = true
		}
		if ok && rt.Dst.Bits() == 0 {
			t.Errorf("pod got a default route %v in table %d, none was listed", r, r.Table)
		}
	}
	for _, want := range s.Routes {
		if !have[want][table] || len(have[want]) != 1 {
			t.Errorf("route %s is in tables %v, want only table %d", describeSpecRoute(want), have[want], table)
		}
	}
	for _, a := range s.Addresses {
		if s.Table > 0 && !have[Route{Dst: a.Masked()}][s.Table] {
			t.Errorf("subnet route %s not in table %d", a.Masked(), s.Table)
		}
	}
	rules, err := h.RuleList(netlink.FAMILY_ALL)
	if err != nil {
		t.Fatalf("list rules: %v", err)
	}
	for _, a := range s.Addresses {
		if got := countRules(rules, a.Addr(), s.Table); s.Table > 0 && got != 1 {
			t.Errorf("rules from %s lookup %d: %d, want 1", a.Addr(), s.Table, got)
		}
	}
	wantIgnore, wantAnnounce := "0", "0"
	if s.ArpTuning {
		wantIgnore, wantAnnounce = "1", "2"
	}
	if got := readSysctl(t, e.pod, arpSysctlPath(s.Name, "arp_ignore")); got != wantIgnore {
		t.Errorf("arp_ignore = %s, want %s", got, wantIgnore)
	}
	if got := readSysctl(t, e.pod, arpSysctlPath(s.Name, "arp_announce")); got != wantAnnounce {
		t.Errorf("arp_announce = %s, want %s", got, wantAnnounce)
	}
}

func countRules(rules []netlink.Rule, addr netip.Addr, table int) int {
	n := 0
	for _, r := range rules {
		if p, ok := ipNetToPrefix(r.Src); ok && p.Addr() == addr && p.Bits() == addr.BitLen() && r.Table == table {
			n++
		}
	}
	return n
}
