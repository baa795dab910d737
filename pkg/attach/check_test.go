package attach

import (
	"os"
	"strings"
	"testing"

	"github.com/containernetworking/plugins/pkg/ns"
	"github.com/vishvananda/netlink"
)

func TestCheckDetectsDrift(t *testing.T) {
	type env struct {
		e *testEnv
		h *netlink.Handle
		l netlink.Link
		s Spec
	}
	tests := []struct {
		name    string
		drift   func(t *testing.T, v env)
		wantErr string
	}{
		{"address removed", func(t *testing.T, v env) {
			must(t, v.h.AddrDel(v.l, netlinkAddr(v.s.Addresses[0])))
		}, "address 10.10.0.5/24 is missing on rail0"},
		{"ipv6 address removed", func(t *testing.T, v env) {
			must(t, v.h.AddrDel(v.l, netlinkAddr(v.s.Addresses[1])))
		}, "address fd00:10::5/64 is missing"},
		{"listed route removed", func(t *testing.T, v env) {
			must(t, v.h.RouteDel(specRoute(v.l.Attrs().Index, v.s.Routes[0], v.s.Table)))
		}, "route 10.20.0.0/16 via 10.10.0.1 is missing on rail0 in table 150"},
		{"table subnet route removed", func(t *testing.T, v env) {
			must(t, v.h.RouteDel(subnetRoute(v.l.Attrs().Index, v.s.Addresses[0], v.s.Table)))
		}, "route 10.10.0.0/24 is missing on rail0 in table 150"},
		{"source rule removed", func(t *testing.T, v env) {
			must(t, v.h.RuleDel(sourceRule(v.s.Addresses[0].Addr(), v.s.Table)))
		}, "rule from 10.10.0.5 lookup 150 is missing"},
		{"mtu changed", func(t *testing.T, v env) {
			must(t, v.h.LinkSetMTU(v.l, 1400))
		}, "has MTU 1400, want 9000"},
		{"set down", func(t *testing.T, v env) {
			must(t, v.h.LinkSetDown(v.l))
		}, "interface rail0 is down"},
		{"arp_ignore reset", func(t *testing.T, v env) {
			must(t, v.e.pod.Do(func(ns.NetNS) error { return os.WriteFile(arpSysctlPath("rail0", "arp_ignore"), []byte("0"), 0o644) }))
		}, "arp_ignore is 0, want 1"},
		{"renamed", func(t *testing.T, v env) {
			must(t, v.h.LinkSetDown(v.l))
			must(t, v.h.LinkSetName(v.l, "eth7"))
		}, "interface rail0 not found in pod netns"},
		{"alias cleared", func(t *testing.T, v env) {
			must(t, v.h.LinkSetAlias(v.l, ""))
		}, "is not rail's move attachment"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newTestEnv(t)
			s := Spec{Mode: ModeMove, Parent: e.addNIC(1500, true), Name: "rail0", MTU: 9000, Table: 150, ArpTuning: true,
				Addresses: prefixes("10.10.0.5/24", "fd00:10::5/64"), Routes: []Route{route("10.20.0.0/16", "10.10.0.1")}}
			if _, err := e.attach(s); err != nil {
				t.Fatalf("Attach: %v", err)
			}
			if err := e.check(s); err != nil {
				t.Fatalf("Check before drift: %v", err)
			}
			tt.drift(t, env{e: e, h: handle(t, e.pod), l: mustLinkIn(t, e.pod, "rail0"), s: s})
			err := e.check(s)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Check = %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestCheckSpecMismatch(t *testing.T) {
	tests := []struct {
		name    string
		change  func(s *Spec)
		wantErr string
	}{
		{"other macvlan mode", func(s *Spec) { s.MacvlanMode = "private" }, `macvlan net1 is in mode`},
		{"other mode", func(s *Spec) { s.Mode = ModeMove }, "is not rail's move attachment"},
		{"other parent", func(s *Spec) { s.Parent = "nicother0" }, "is not rail's macvlan attachment of nicother0"},
		{"extra address", func(s *Spec) { s.Addresses = prefixes("10.10.0.5/24", "10.10.0.6/24") }, "address 10.10.0.6/24 is missing"},
		{"extra route in main", func(s *Spec) { s.Routes = []Route{route("10.60.0.0/16", "")} }, "route 10.60.0.0/16 is missing on net1 in table 254"},
		{"pod netns gone", nil, "pod netns is gone"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newTestEnv(t)
			s := Spec{Mode: ModeMacvlan, Parent: e.addNIC(1500, true), Name: "net1", Addresses: prefixes("10.10.0.5/24")}
			if _, err := e.attach(s); err != nil {
				t.Fatalf("Attach: %v", err)
			}
			if tt.change != nil {
				tt.change(&s)
			} else {
				removeTestNetns(e.pod)
			}
			err := e.check(s)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Check = %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
