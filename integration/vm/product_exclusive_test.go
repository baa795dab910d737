package vm

import (
	"slices"
	"strings"
	"testing"

	"github.com/vishvananda/netlink"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/netnstest"
	"github.com/railcni/rail/pkg/rdma"
)

// TestMovePodExclusive runs the product in exclusive RDMA netns mode with
// rail in move mode. The only RDMA device raild can place in the guest is
// an rxe, and the netdev raild pairs with it (from its GID table) is the
// rxe's own: moving that netdev makes the kernel unregister the rxe (see
// TestAttachMoveOfRxeNetdev). So the pod cannot get the device; the test
// shows that limit through the whole product — the sandbox fails with
// rail's error, the kernel has destroyed the rxe, and everything else is
// back as it was: the NIC in the guest's netns under its name, MTU and
// state, no lease, no pod netns. (pkg/attach moves a PCI netdev together
// with an rxe of another netdev in TestAttachMoveCarriesRDMADevice; raild
// never pairs them, as no real NIC is built that way.)
func TestMovePodExclusive(t *testing.T) {
	requireBoot(t, rdma.NetnsExclusive)
	n := requireGuestNode(t)
	nic := useGuestNIC(t)
	dev := netnstest.UniqueName(t, "rvx")
	addRxe(t, rdmaHandle(t, nil), dev, nic)
	n.start(t, chainedConflist(n, "move"), raildConfig(n, "10.78.0.0/24"))
	before := snapshotGuest(t)
	charDevs := charDevsOf(t, dev)

	p, err := n.runPod(t, "moved", map[string]string{api.AnnotationAttach: "true"})
	if err == nil {
		netns := p.netnsPath(t)
		t.Errorf("the kernel let %s keep %s in the pod: the rig's kernel facts changed; check the container "+
			"sees only it, then update docs/limitations.md", nic, dev)
		p.stop(t)
		p.remove(t)
		assertGone(t, netns)
		return
	}
	t.Logf("runp failed as the kernel forces it: %v", err)
	if !strings.Contains(err.Error(), dev) {
		t.Errorf("the error does not name the RDMA device %s: %v", dev, err)
	}
	if slices.Contains(rdmaDevices(t, rdmaHandle(t, nil)), dev) {
		t.Errorf("%s survived the move of its netdev: the kernel limit this test shows is gone", dev)
	}
	if left := n.leases(t); len(left) != 0 {
		t.Errorf("leases left after the failed ADD: %+v", left)
	}
	if _, err := netlink.LinkByName(nic); err != nil {
		t.Errorf("%s is not back in the guest's netns: %v", nic, err)
	}
	if out := n.mustCrictl(t, "pods", "-q"); out != "" {
		t.Errorf("sandboxes left: %s", out)
	}
	// Only what the kernel destroyed may differ: the rxe, its GIDs, its char devices.
	for _, d := range snapshotGuest(t).diff(before) {
		if !strings.Contains(d, dev) && !slices.ContainsFunc(charDevs, func(c string) bool {
			return strings.HasPrefix(d, "dev/infiniband: gone: "+c+" ")
		}) {
			t.Errorf("the guest changed: %s", d)
		}
	}
}
