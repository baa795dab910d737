package inventory

import (
	"fmt"
	"testing"
	"time"
)

// TestKernelFilterOnFakeMachine: on a fake machine (raild --root, as
// make bench and the harness run it) the kernel's parent devices say
// nothing of the NICs, whose netdevs are stand-ins without one; a new link
// passes the filter only when the fake sysfs or a snapshot names it. A
// stand-in NIC arriving after the watch started is read; veth pods of
// another plugin churned beside the inventory reach it not at all (before,
// every new link passed on such a machine: a veth pair made and deleted
// cost raild about 0.6 ms of CPU).
func TestKernelFilterOnFakeMachine(t *testing.T) {
	r := newStandInRig(t, "f")
	inv, err := New(r.root, nil, nil)
	must(t, err)
	if inv.linksDescribed {
		t.Fatal("a fake root is taken for the kernel's sysfs")
	}
	runWatch(t, inv, r.ns, Watch{Settle: 20 * time.Millisecond})
	start := waitQuiet(t, inv)

	// the stand-in arrives after the watch started: named by the
	// snapshot (its NIC's netdev, not in the netns), it passes
	must(t, r.h.LinkAdd(r.nic))
	waitRead(t, inv, start.nicReads(), "the stand-in NIC's arrival")
	before := waitQuiet(t, inv)

	const pods = 50
	for i := range pods {
		vethPod(t, r.h, r.podH, r.podNS, fmt.Sprintf("%sv%d", r.base, i), fmt.Sprintf("%sp%d", r.base, i))
	}
	// a change of the NIC marks the end of the churn: read once every
	// event before it was
	must(t, r.h.LinkSetMTU(r.nic, 2900))
	waitRead(t, inv, before.nicReads(), "the NIC's MTU change")
	after := waitQuiet(t, inv)
	if read := after.Events - before.Events - 1; read != 0 {
		t.Errorf("%d veth pods beside the inventory on a fake machine: it read %d of their events, want none", pods, read)
	}
	if after.FullRescans != before.FullRescans || after.nicReads()-before.nicReads() != 1 {
		t.Errorf("the churn cost %d full rescans and %d device reads besides the mark's: want none",
			after.FullRescans-before.FullRescans, after.nicReads()-before.nicReads()-1)
	}
}
