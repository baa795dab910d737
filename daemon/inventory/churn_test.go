package inventory

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"

	"github.com/railcni/rail/pkg/topology/fakesys"
)

// TestChurnBesideCostsNoRescan: 200 veth pairs created, set up and
// deleted beside a running inventory (pods of another plugin coming and
// going), and 50 macvlans another plugin creates on a NIC's netdev (a
// veth standing in for mlx5_0's) straight into a pod's netns, sets up
// and deletes, cost no read of the node or of a device, and publish
// nothing: only a NIC's own changes concern the inventory. Before, every
// burst of them rescanned the whole node; then their events were read and
// ignored; now, on this fake machine too, the kernel drops them.
func TestChurnBesideCostsNoRescan(t *testing.T) {
	r := newStandInRig(t, "ch")
	ns, h, podNS, podH, base, nic := r.ns, r.h, r.podNS, r.podH, r.base, r.nic
	inv := watching(t, ns, r.root, Watch{Settle: 5 * time.Millisecond, FollowUp: 20 * time.Millisecond})
	must(t, h.LinkAdd(nic))
	must(t, h.LinkSetUp(nic))
	peer, err := podH.LinkByName(nic.PeerName)
	must(t, err)
	must(t, podH.LinkSetUp(peer))
	// The kernel's link watch sends the stand-in's operational state
	// later, up to seconds while other links churn: wait for it, so it
	// is not counted against the churn.
	deadline := time.Now().Add(20 * time.Second) // a hang guard, not a speed claim
	for {
		l, err := h.LinkByName(nic.Name)
		must(t, err)
		if l.Attrs().OperState == netlink.OperUp {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the stand-in %s is %s, not up", nic.Name, l.Attrs().OperState)
		}
		time.Sleep(10 * time.Millisecond)
	}
	waitEvents(t, inv, 2)
	before := waitQuiet(t, inv) // the stand-in's own reads and follow-up done

	const pairs, macvlans = 200, 50
	for i := range pairs {
		veth := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: fmt.Sprintf("%s-%da", base, i)}, PeerName: fmt.Sprintf("%s-%db", base, i)}
		must(t, h.LinkAdd(veth))
		must(t, h.LinkSetUp(veth))
		must(t, h.LinkDel(veth))
	}
	parent, err := h.LinkByName(nic.Name)
	must(t, err)
	for i := range macvlans {
		attrs := netlink.NewLinkAttrs()
		attrs.Name, attrs.ParentIndex, attrs.Namespace = fmt.Sprintf("%s-m%d", base, i), parent.Attrs().Index, netlink.NsFd(int(podNS))
		must(t, h.LinkAdd(&netlink.Macvlan{LinkAttrs: attrs, Mode: netlink.MACVLAN_MODE_BRIDGE}))
		mv, err := podH.LinkByName(attrs.Name)
		must(t, err)
		must(t, podH.LinkSetUp(mv))
		must(t, podH.LinkDel(mv))
	}
	// On this fake machine only the netdevs its sysfs names pass the
	// kernel's filter as new links (TestKernelFilterOnFakeMachine): the
	// pairs' events, and the NIC's own as each macvlan comes and goes (an
	// upper device added, removed: ifi_change 0, nothing the inventory
	// follows changed), are all dropped before the inventory wakes. A
	// change of the NIC marks the end of the churn: it is read once every
	// event before it was, so a watch that reads nothing cannot pass.
	must(t, h.LinkSetMTU(parent, 2900))
	waitRead(t, inv, before.nicReads(), "the NIC's MTU change")
	after := waitQuiet(t, inv) // a follow-up (20 ms), had any been due, done
	if after.FullRescans != before.FullRescans || after.nicReads()-before.nicReads() > 2 || after.Published-before.Published > 1 {
		t.Errorf("%d link events beside the NICs cost %d full rescans, %d device reads, %d snapshots; want only the mark's (one read, its follow-up, one snapshot)",
			after.Events-before.Events, after.FullRescans-before.FullRescans, after.nicReads()-before.nicReads(),
			after.Published-before.Published)
	}
	if read := after.Events - before.Events; read != 1 {
		t.Errorf("%d events read, want only the NIC's MTU change: %d veth pairs and %d macvlans' dropped in the kernel", read, pairs, macvlans)
	}

	// A macvlan set up on the NIC in the node's own netns is an upper
	// device of it there (the NIC is then the node's own): the NIC is
	// read again.
	attrs := netlink.NewLinkAttrs()
	attrs.Name, attrs.ParentIndex = base+"-mh", parent.Attrs().Index
	host := &netlink.Macvlan{LinkAttrs: attrs, Mode: netlink.MACVLAN_MODE_BRIDGE}
	must(t, h.LinkAdd(host))
	must(t, h.LinkSetUp(host))
	deadline = time.Now().Add(20 * time.Second) // a hang guard, not a speed claim
	for inv.Stats().nicReads() == after.nicReads() && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if inv.Stats().nicReads() == after.nicReads() {
		t.Error("a macvlan set up on the NIC in the node's netns did not make the inventory read the NIC")
	}
}

// standInRig is a node netns and a pod netns, with a NIC's stand-in (a
// veth whose peer sits in the pod's netns: in the host's it would be a
// link on the NIC, IFLA_LINK, as an upper device is, and its late carrier
// events would pass the filter while it is up) named in a fake machine as
// mlx5_0's netdev; the stand-in is not created.
type standInRig struct {
	ns, podNS netns.NsHandle
	h, podH   *netlink.Handle
	base      string // starts every link name of the test
	nic       *netlink.Veth
	root      string // the fake machine
}

func newStandInRig(t *testing.T, tag string) standInRig {
	t.Helper()
	r := standInRig{base: fmt.Sprintf("ry%s%d", tag, os.Getpid()%100000)}
	r.ns, r.h = testNetns(t)
	r.podNS, r.podH = namedNetns(t, fmt.Sprintf("ry-inv-%d-%spod", os.Getpid(), tag))
	r.nic = &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: r.base + "n"}, PeerName: r.base + "p", PeerNamespace: netlink.NsFd(int(r.podNS))}
	r.root, _ = fakeNode(t, fakesys.Options{Netdevs: map[string]string{"mlx5_0": r.nic.Name}})
	return r
}

// waitRead waits until the inventory read a device since it had read
// reads: what was done before that was read first.
func waitRead(t *testing.T, inv *Inventory, reads uint64, what string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second) // a hang guard, not a speed claim
	for inv.Stats().nicReads() == reads {
		if time.Now().After(deadline) {
			t.Fatalf("%s was not read: %+v", what, inv.Stats())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitEvents waits until the inventory read at least n link events.
func waitEvents(t *testing.T, inv *Inventory, n uint64) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second) // a hang guard, not a speed claim
	for inv.Stats().Events < n {
		if time.Now().After(deadline) {
			t.Fatalf("read %d link events, want at least %d", inv.Stats().Events, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitQuiet waits until the inventory's counters stop moving: the same
// for 10 samples in a row, well past the watch's 20 ms follow-up. Under
// load a fixed sleep either came too early (a late follow-up counted
// against the churn) or proved nothing.
func waitQuiet(t *testing.T, inv *Inventory) Stats {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second) // a hang guard, not a speed claim
	last, same := inv.Stats(), 0
	for same < 10 {
		if time.Now().After(deadline) {
			t.Fatalf("the inventory kept working for 20 s: %+v", inv.Stats())
		}
		time.Sleep(10 * time.Millisecond)
		now := inv.Stats()
		if now == last {
			same++
		} else {
			last, same = now, 0
		}
	}
	return last
}

// nicReads are the reads of a NIC since the inventory started: of its
// RDMA device whole, or of its ports alone (a change of its netdev).
func (s Stats) nicReads() uint64 { return s.DeviceReads + s.PortReads }
