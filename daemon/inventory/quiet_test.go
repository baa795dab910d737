package inventory

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/railcni/rail/pkg/topology/fakesys"
)

// TestKernelFilterQuietsChurn: with the kernel filter as raild sets it on
// a real node (the sysfs read is the kernel's own, so a new link without
// a parent device is no NIC), pods of other plugins churned beside the
// inventory reach it not at all (veth pods; upstream macvlan's macvlan,
// made down on the NIC's netdev and moved into the pod) and cost no read;
// an unfiltered socket beside it shows what the kernel sent. A macvlan
// set up on the NIC in the node's netns is read. A NIC stand-in that was
// there before the watch started (its ifindex found by its name) still
// has its state changes read.
func TestKernelFilterQuietsChurn(t *testing.T) {
	ns, h := testNetns(t)
	podNS, podH := namedNetns(t, fmt.Sprintf("ry-inv-%d-qpod", os.Getpid()))
	base := fmt.Sprintf("ryq%d", os.Getpid()%100000)
	nic := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: base + "n"}, PeerName: base + "np", PeerNamespace: netlink.NsFd(int(podNS))}
	must(t, h.LinkAdd(nic))
	root, _ := fakeNode(t, fakesys.Options{Netdevs: map[string]string{"mlx5_0": nic.Name}})
	inv, err := New(root, nil, nil)
	must(t, err)
	inv.linksDescribed = true // as on a node: the fake tree stands in for the kernel's sysfs
	if !kernelNamesParents() {
		t.Skip("the kernel does not name links' parent devices (Linux 5.16)")
	}
	published := make(chan *Snapshot, 64)
	all := record(t, ns)
	runWatch(t, inv, ns, Watch{Settle: 20 * time.Millisecond, Published: func(s *Snapshot) {
		select {
		case published <- s:
		default:
		}
	}})
	mtu := 1500
	// mark changes the NIC's MTU and waits until the inventory has read
	// it (a device read: every event before it was read), and the
	// unfiltered socket too; it returns the kernel's events before it of
	// links named with prefix.
	mark := func(prefix string) int {
		t.Helper()
		reads := inv.Stats().nicReads()
		mtu = 2900 - mtu
		must(t, h.LinkSetMTU(nic, mtu))
		deadline := time.Now().Add(20 * time.Second) // a hang guard, not a speed claim
		for inv.Stats().nicReads() == reads {
			if time.Now().After(deadline) {
				t.Fatalf("the inventory did not read the NIC's MTU change: %+v", inv.Stats())
			}
			time.Sleep(5 * time.Millisecond)
		}
		n := 0
		for _, name := range all.until(t, nic.Name) {
			if strings.HasPrefix(strings.TrimPrefix(name, "-"), prefix) {
				n++
			}
		}
		return n
	}
	mark("")
	before := waitQuiet(t, inv)

	const pods, macvlans = 100, 30
	for i := range pods {
		vethPod(t, h, podH, podNS, fmt.Sprintf("%sv%d", base, i), fmt.Sprintf("%sp%d", base, i))
	}
	sent := mark(base + "v")
	vethPhase := waitQuiet(t, inv)
	if read := vethPhase.Events - before.Events - 1; sent < 3*pods || read != 0 {
		t.Errorf("%d veth pods: the kernel sent %d events of their host ends, the inventory read %d besides the NIC's; want at least %d and none",
			pods, sent, read, 3*pods)
	}

	parent, err := h.LinkByName(nic.Name)
	must(t, err)
	for i := range macvlans {
		macvlanPod(t, h, podH, podNS, parent.Attrs().Index, fmt.Sprintf("%sm%d", base, i))
	}
	mark(base + "m")
	after := waitQuiet(t, inv)
	if read := after.Events - vethPhase.Events - 1; read != 0 {
		t.Errorf("%d macvlan pods: the inventory read %d events besides the NIC's, want none", macvlans, read)
	}
	if after.FullRescans != before.FullRescans || after.nicReads()-before.nicReads() != 2 {
		t.Errorf("the churn cost %d full rescans and %d device reads besides the two marks': want none",
			after.FullRescans-before.FullRescans, after.nicReads()-before.nicReads()-2)
	}

	// a macvlan set up on the NIC in the node's netns (the NIC is the
	// node's own then) is read, and watched from then on: its removal is
	// read too
	attrs := netlink.NewLinkAttrs()
	attrs.Name, attrs.ParentIndex = base+"mh", parent.Attrs().Index
	stays := &netlink.Macvlan{LinkAttrs: attrs, Mode: netlink.MACVLAN_MODE_BRIDGE}
	for _, step := range []struct {
		what string
		do   func(netlink.Link) error
	}{{"made and set up", func(l netlink.Link) error {
		if err := h.LinkAdd(l); err != nil {
			return err
		}
		return h.LinkSetUp(l)
	}}, {"deleted", h.LinkDel}} {
		reads := inv.Stats().nicReads()
		must(t, step.do(stays))
		deadline := time.Now().Add(20 * time.Second) // a hang guard, not a speed claim
		for inv.Stats().nicReads() == reads && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		if inv.Stats().nicReads() == reads {
			t.Fatalf("a macvlan on the NIC in the node's netns %s: the NIC was not read", step.what)
		}
	}

	// the NIC's port goes down and its netdev changes: read and published
	must(t, fakesys.SetPortState(root, "mlx5_0", 1, "DOWN"))
	must(t, h.LinkSetUp(nic))
	waitFor(t, published, "mlx5_0 DOWN", func(s *Snapshot) bool {
		n, _ := s.Machine.NICByName("mlx5_0")
		return n.State == "DOWN"
	})
}
