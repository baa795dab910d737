package inventory

import (
	"fmt"
	"net"
	"os"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/railcni/rail/pkg/topology/fakesys"
)

// TestKernelFilterFollowsNICState: a NIC's netdev (a veth standing in for
// mlx5_0's) is watched, and the kernel filter compares its events with
// the state raild last read. What changes nothing the inventory follows
// (promiscuity toggled, someone's macvlan added on it and removed, its
// queue length) wakes it not at all, though the kernel sends events (an
// unfiltered socket beside it shows them); what does (MTU, carrier and
// operational state, admin state, master, address, alias) is read. Each
// step ends with a marker: an MTU change of a second NIC's netdev, read
// after the step's events.
func TestKernelFilterFollowsNICState(t *testing.T) {
	ns, h := testNetns(t)
	podNS, podH := namedNetns(t, fmt.Sprintf("ry-inv-%d-spod", os.Getpid()))
	base := fmt.Sprintf("rys%d", os.Getpid()%100000)
	nic := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: base + "n"}, PeerName: base + "p"}
	other := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: base + "o"}, PeerName: base + "q"}
	root, _ := fakeNode(t, fakesys.Options{Netdevs: map[string]string{"mlx5_0": nic.Name, "mlx5_1": other.Name}})
	for _, l := range []*netlink.Veth{nic, other} {
		must(t, h.LinkAdd(l))
		must(t, h.LinkSetUp(l))
		peer, err := h.LinkByName(l.PeerName)
		must(t, err)
		must(t, h.LinkSetUp(peer))
	}
	waitOperUp(t, h, nic.Name)
	waitOperUp(t, h, other.Name)
	all := record(t, ns)
	inv := watching(t, ns, root, Watch{Settle: 5 * time.Millisecond})
	deadline := time.Now().Add(20 * time.Second) // a hang guard, not a speed claim
	for !inv.Stats().LinkFilter {
		if time.Now().After(deadline) {
			t.Fatalf("no kernel filter set: %+v", inv.Stats())
		}
		time.Sleep(5 * time.Millisecond)
	}

	peer, err := h.LinkByName(nic.PeerName)
	must(t, err)
	link, err := h.LinkByName(nic.Name)
	must(t, err)
	br := &netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: base + "b"}}
	must(t, h.LinkAdd(br))
	markMTU := 1500
	// step does something to the NIC, then the marker, and says how many
	// link events the inventory read and devices it read for it (the
	// marker's left out), and how many events the kernel sent of the NIC.
	// read: the NIC is to be read (its events may come after the
	// marker's: the kernel's link watch sends carrier changes later).
	step := func(do func() error, read bool) (events, reads uint64, sent int) {
		t.Helper()
		before := waitQuiet(t, inv)
		must(t, do())
		markMTU = 2900 - markMTU
		must(t, h.LinkSetMTU(other, markMTU))
		want := before.nicReads() + 1
		if read {
			want++
		}
		deadline := time.Now().Add(20 * time.Second) // a hang guard, not a speed claim
		for inv.Stats().nicReads() < want && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		after := waitQuiet(t, inv)
		for _, name := range all.until(t, other.Name) {
			if name == nic.Name {
				sent++
			}
		}
		return after.Events - before.Events - 1, after.nicReads() - before.nicReads() - 1, sent
	}
	step(func() error { return nil }, false) // what came before

	quiet := []struct {
		name string
		do   func() error
	}{
		{"promiscuity on", func() error { return h.SetPromiscOn(link) }},
		{"promiscuity off", func() error { return h.SetPromiscOff(link) }},
		{"a macvlan made on it in a pod's netns and deleted there", func() error {
			attrs := netlink.NewLinkAttrs()
			attrs.Name, attrs.ParentIndex, attrs.Namespace = base+"m", link.Attrs().Index, netlink.NsFd(int(podNS))
			if err := h.LinkAdd(&netlink.Macvlan{LinkAttrs: attrs, Mode: netlink.MACVLAN_MODE_BRIDGE}); err != nil {
				return err
			}
			mv, err := podH.LinkByName(attrs.Name)
			if err != nil {
				return err
			}
			return podH.LinkDel(mv)
		}},
		{"its queue length", func() error { return h.LinkSetTxQLen(link, 2000) }},
	}
	for _, s := range quiet {
		if read, reads, sent := step(s.do, false); sent == 0 || read != 0 || reads != 0 {
			t.Errorf("%s: the kernel sent %d events of the NIC, the inventory read %d and %d devices; want some, none and none",
				s.name, sent, read, reads)
		}
	}

	mac, err := net.ParseMAC("02:00:00:00:7a:01")
	must(t, err)
	followed := []struct {
		name string
		do   func() error
	}{
		{"its MTU", func() error { return h.LinkSetMTU(link, 1400) }},
		{"its carrier lost", func() error { return h.LinkSetDown(peer) }},
		{"its carrier back", func() error { return h.LinkSetUp(peer) }},
		{"set down", func() error { return h.LinkSetDown(link) }},
		{"set up", func() error { return h.LinkSetUp(link) }},
		{"a master", func() error { return h.LinkSetMaster(link, br) }},
		{"no master", func() error { return h.LinkSetNoMaster(link) }},
		{"its address", func() error { return h.LinkSetHardwareAddr(link, mac) }},
		{"an alias", func() error { return h.LinkSetAlias(link, "rail test") }},
	}
	for _, s := range followed {
		if read, reads, _ := step(s.do, true); read == 0 || reads == 0 {
			t.Errorf("%s: the inventory read %d events and %d devices, want the NIC read", s.name, read, reads)
		}
	}
	if st := inv.Stats(); !st.LinkFilter || st.LinkFilterFailures != 0 {
		t.Errorf("the filter: set %v, %d failures; want set, none", st.LinkFilter, st.LinkFilterFailures)
	}
}

// waitOperUp waits for a link's operational state up: the kernel's link
// watch sends it later, up to seconds on a busy machine.
func waitOperUp(t *testing.T, h *netlink.Handle, name string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second) // a hang guard, not a speed claim
	for {
		l, err := h.LinkByName(name)
		must(t, err)
		if l.Attrs().OperState == netlink.OperUp {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s is %s, not up", name, l.Attrs().OperState)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
