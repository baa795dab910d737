package attach

import (
	"testing"

	"github.com/vishvananda/netlink"
)

func TestMacvlanAttachCheckDetach(t *testing.T) {
	tests := []struct {
		name     string
		spec     Spec
		wantMode netlink.MacvlanMode
	}{
		{"bridge by default", Spec{Name: "net1", Addresses: prefixes("10.10.0.5/24")}, netlink.MACVLAN_MODE_BRIDGE},
		{"private with mac and lower mtu", Spec{Name: "net1", MacvlanMode: "private", MAC: "02:aa:bb:cc:dd:01", MTU: 1400,
			Addresses: prefixes("10.10.0.6/24"), Routes: []Route{route("10.20.0.0/16", "10.10.0.1")}}, netlink.MACVLAN_MODE_PRIVATE},
		{"vepa, dual stack, policy table, arp tuning", Spec{Name: "net1-1", MacvlanMode: "vepa", Table: 140, ArpTuning: true,
			Addresses: prefixes("10.10.0.7/24", "fd00:10::7/64"), Routes: []Route{route("fd00:20::/64", "fd00:10::1")}}, netlink.MACVLAN_MODE_VEPA},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newTestEnv(t)
			s := tt.spec
			s.Mode = ModeMacvlan
			s.Parent = e.addNIC(1500, true)
			parentIndex := mustLinkIn(t, e.host, s.Parent).Attrs().Index
			hostBefore, podBefore := snapshot(t, e.host), snapshot(t, e.pod)

			res, err := e.attach(s)
			if err != nil {
				t.Fatalf("Attach: %v", err)
			}
			assertSame(t, "host netns after Attach", e.host, hostBefore)
			l := mustLinkIn(t, e.pod, s.Name)
			mv, ok := l.(*netlink.Macvlan)
			if !ok {
				t.Fatalf("pod link is a %s, want macvlan", l.Type())
			}
			if mv.Mode != tt.wantMode || mv.ParentIndex != parentIndex {
				t.Errorf("macvlan mode %d parent %d, want mode %d parent %d", mv.Mode, mv.ParentIndex, tt.wantMode, parentIndex)
			}
			if s.MAC != "" && mv.HardwareAddr.String() != s.MAC {
				t.Errorf("MAC %s, want %s", mv.HardwareAddr, s.MAC)
			}
			wantAlias := aliasRecord{Host: s.Parent, Name: s.Name, Kind: "macvlan", Table: s.Table}.String()
			if mv.Alias != wantAlias {
				t.Errorf("alias %q, want %q", mv.Alias, wantAlias)
			}
			wantMTU := 1500
			if s.MTU > 0 {
				wantMTU = s.MTU
			}
			if res != (Result{Name: s.Name, MAC: mv.HardwareAddr.String(), MTU: wantMTU, Index: mv.Index}) || mv.MTU != wantMTU {
				t.Errorf("Result %+v, link mtu %d; want mtu %d index %d", res, mv.MTU, wantMTU, mv.Index)
			}
			assertLayer3(t, e, l, s)
			if err := e.check(s); err != nil {
				t.Errorf("Check: %v", err)
			}

			if err := e.detach(s); err != nil {
				t.Fatalf("Detach: %v", err)
			}
			assertSame(t, "pod netns after Detach", e.pod, podBefore)
			assertSame(t, "host netns after Detach", e.host, hostBefore)
			if err := e.detach(s); err != nil {
				t.Fatalf("second Detach: %v", err)
			}
		})
	}
}

func TestMacvlanDetachAfterRenameInPod(t *testing.T) {
	e := newTestEnv(t)
	s := Spec{Mode: ModeMacvlan, Parent: e.addNIC(1500, true), Name: "net1", Table: 141, Addresses: prefixes("10.10.0.5/24")}
	podBefore := snapshot(t, e.pod)
	if _, err := e.attach(s); err != nil {
		t.Fatalf("Attach: %v", err)
	}
	h := handle(t, e.pod)
	l := mustLinkIn(t, e.pod, s.Name)
	if err := h.LinkSetDown(l); err != nil {
		t.Fatal(err)
	}
	if err := h.LinkSetName(l, "other0"); err != nil {
		t.Fatal(err)
	}
	if err := e.detach(s); err != nil {
		t.Fatalf("Detach: %v", err)
	}
	assertSame(t, "pod netns", e.pod, podBefore)
}

// TestDetachLeavesForeignInterface: an interface with the spec's name that
// rail did not create is not deleted.
func TestDetachLeavesForeignInterface(t *testing.T) {
	for _, mode := range []Mode{ModeMove, ModeMacvlan} {
		t.Run(string(mode), func(t *testing.T) {
			e := newTestEnv(t)
			nic := e.addNIC(1500, true)
			e.addPodVeth("net1")
			hostBefore, podBefore := snapshot(t, e.host), snapshot(t, e.pod)
			if err := e.detach(Spec{Mode: mode, Parent: nic, Name: "net1"}); err != nil {
				t.Fatalf("Detach: %v", err)
			}
			assertSame(t, "host netns", e.host, hostBefore)
			assertSame(t, "pod netns", e.pod, podBefore)
		})
	}
}
