package attach

import (
	"errors"
	"strings"
	"testing"

	"github.com/containernetworking/plugins/pkg/ns"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// skipWithoutIPVLAN skips when this kernel has no ipvlan link type (the
// build host has none; the VM rig's kernel has it): it asks the kernel for
// an ipvlan on a throwaway parent in the test's wire netns.
func skipWithoutIPVLAN(t *testing.T, e *testEnv) {
	t.Helper()
	err := e.wire.Do(func(ns.NetNS) error {
		veth := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: "ipvprobe0"}, PeerName: "ipvprobe1"}
		if err := netlink.LinkAdd(veth); err != nil {
			return err
		}
		defer netlink.LinkDel(veth)
		l, err := netlink.LinkByName("ipvprobe0")
		if err != nil {
			return err
		}
		iv := &netlink.IPVlan{LinkAttrs: netlink.LinkAttrs{Name: "ipvprobe2", ParentIndex: l.Attrs().Index}, Mode: netlink.IPVLAN_MODE_L2}
		if err := netlink.LinkAdd(iv); err != nil {
			return err
		}
		return netlink.LinkDel(iv)
	})
	if errors.Is(err, unix.EOPNOTSUPP) {
		t.Skip("this kernel has no ipvlan link type (module ipvlan): the VM rig runs this")
	}
	if err != nil {
		t.Fatalf("probe ipvlan: %v", err)
	}
}

// TestIPVLANAttachCheckDetach: an L2 ipvlan child with the parent's MAC,
// its addresses and routes in the pod, checked, and gone after Detach.
func TestIPVLANAttachCheckDetach(t *testing.T) {
	e := newTestEnv(t)
	skipWithoutIPVLAN(t, e)
	s := Spec{Mode: ModeIPVLAN, Parent: e.addNIC(1500, true), Name: "rail0", Table: 142, ArpTuning: true,
		Addresses: prefixes("10.10.0.5/24"), Routes: []Route{route("10.20.0.0/16", "10.10.0.1")}}
	parent := mustLinkIn(t, e.host, s.Parent)
	hostBefore, podBefore := snapshot(t, e.host), snapshot(t, e.pod)
	if _, err := e.attach(s); err != nil {
		t.Fatalf("Attach: %v", err)
	}
	l := mustLinkIn(t, e.pod, s.Name)
	iv, ok := l.(*netlink.IPVlan)
	if !ok || iv.Mode != netlink.IPVLAN_MODE_L2 || iv.ParentIndex != parent.Attrs().Index {
		t.Fatalf("pod link %s %+v, want an L2 ipvlan of %s", l.Type(), l.Attrs(), s.Parent)
	}
	if iv.HardwareAddr.String() != parent.Attrs().HardwareAddr.String() {
		t.Errorf("ipvlan MAC %s, want the parent's %s", iv.HardwareAddr, parent.Attrs().HardwareAddr)
	}
	assertLayer3(t, e, l, s)
	if err := e.check(s); err != nil {
		t.Errorf("Check: %v", err)
	}
	if err := e.detach(Spec{Name: s.Name}); err != nil {
		t.Fatalf("Detach from the alias: %v", err)
	}
	assertSame(t, "pod netns after Detach", e.pod, podBefore)
	assertSame(t, "host netns after Detach", e.host, hostBefore)
}

// TestIPVLANRefusals: an InfiniBand parent is refused naming ipoib, and a
// kernel's EOPNOTSUPP is explained; neither needs ipvlan in the kernel.
func TestIPVLANRefusals(t *testing.T) {
	ib := &netlink.Device{LinkAttrs: netlink.LinkAttrs{Name: "ib0", EncapType: "infiniband"}}
	err := requireEthernetParent(ib, ModeIPVLAN)
	if err == nil || !strings.Contains(err.Error(), `"ipoib"`) || !strings.Contains(err.Error(), "ib0 is InfiniBand") {
		t.Errorf("InfiniBand parent: %v, want a refusal naming ib0 and mode ipoib", err)
	}
	eth := &netlink.Device{LinkAttrs: netlink.LinkAttrs{Name: "eth1", EncapType: "ether"}}
	if err := requireEthernetParent(eth, ModeIPVLAN); err != nil {
		t.Errorf("Ethernet parent: %v", err)
	}
	if hint := missingKind(unix.EOPNOTSUPP, "ipvlan"); !strings.Contains(hint, "load the ipvlan module") {
		t.Errorf("EOPNOTSUPP hint %q", hint)
	}
	if hint := missingKind(unix.EEXIST, "ipvlan"); hint != "" {
		t.Errorf("EEXIST hint %q, want none", hint)
	}
}
