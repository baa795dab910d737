package inventory

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/railcni/rail/pkg/topology/fakesys"
)

// TestChurnBesideCostsNoRescan: 200 veth pairs created, set up and
// deleted beside a running inventory (pods of another plugin coming and
// going) are read as events and cost no read of the node or of a device,
// and publish nothing: only links of NICs concern the inventory. Before,
// every burst of them rescanned the whole node.
func TestChurnBesideCostsNoRescan(t *testing.T) {
	ns, h := testNetns(t)
	root, _ := fakeNode(t, fakesys.Options{})
	inv := watching(t, ns, root, Watch{Settle: 5 * time.Millisecond, FollowUp: 20 * time.Millisecond})
	before := inv.Stats()

	const pairs = 200
	base := fmt.Sprintf("rych%d", os.Getpid()%100000)
	for i := range pairs {
		veth := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: fmt.Sprintf("%s-%da", base, i)}, PeerName: fmt.Sprintf("%s-%db", base, i)}
		must(t, h.LinkAdd(veth))
		must(t, h.LinkSetUp(veth))
		must(t, h.LinkDel(veth))
	}
	// Each pair gives at least two events for its creation, one for its
	// state and one for its removal: wait until they were all read, so a
	// watch that reads none cannot pass.
	want := before.Events + 4*pairs
	deadline := time.Now().Add(20 * time.Second) // a hang guard, not a speed claim
	for inv.Stats().Events < want && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond) // a follow-up, had any been due
	after := inv.Stats()
	if after.Events < want {
		t.Fatalf("read %d link events, want at least %d", after.Events-before.Events, want-before.Events)
	}
	if after.FullRescans != before.FullRescans || after.DeviceReads != before.DeviceReads || after.Published != before.Published {
		t.Errorf("%d link events of veth pairs cost %d full rescans, %d device reads, %d snapshots; want none",
			after.Events-before.Events, after.FullRescans-before.FullRescans, after.DeviceReads-before.DeviceReads,
			after.Published-before.Published)
	}
	if after.Ignored-before.Ignored != after.Events-before.Events {
		t.Errorf("%d of %d events ignored, want all", after.Ignored-before.Ignored, after.Events-before.Events)
	}
}
