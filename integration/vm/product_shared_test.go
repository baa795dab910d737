package vm

import (
	"fmt"
	"maps"
	"net/netip"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/rdma"
)

const (
	// memlockKiB is raild's nri.memlock in these tests, as `ulimit -l` shows it.
	memlockKiB = 16384
	// mrBytes is the buffer the verbs program registers: above the runtime's
	// default RLIMIT_MEMLOCK (8 MiB here), below raild's.
	mrBytes = 10 << 20
)

// TestVerbsInPodShared runs the product as a node runs it, in shared RDMA
// netns mode: containerd + NRI + runc, raild on the guest's real sysfs, the
// chain ptp → rail (macvlan on the rxe's netdev), pods from crictl; then
// checks from inside a container what the pod got.
func TestVerbsInPodShared(t *testing.T) {
	requireBoot(t, rdma.NetnsShared)
	n := requireGuestNode(t)
	parent, peer := addVethPair(t)
	dev := uniqueName(t, "rvx")
	addRxe(t, rdmaHandle(t, nil), dev, parent)
	uverbs, uverbsNode := uverbsOf(t, dev)
	n.start(t, chainedConflist(n, "macvlan"), raildConfig(n, "10.77.0.0/24"))
	n.importVerbsImage(t)
	before := snapshotGuest(t)

	p := n.mustRunPod(t, "verbs", map[string]string{api.AnnotationAttach: "true"})
	lease := p.leaseOf(t)
	if !slices.Equal(lease.nics, []string{dev}) || lease.mode != "macvlan" {
		t.Fatalf("lease %v: want %s in macvlan mode", lease, dev)
	}
	addr := netip.MustParsePrefix(lease.address).Addr()
	app := p.startContainer(t, "app", verbsImage)
	plain := n.mustRunPod(t, "plain", nil) // no GPU, no annotation: rail passes it through
	plainApp := plain.startContainer(t, "app", verbsImage)
	plainView := n.probe(t, plainApp, dev)
	t.Logf("guest memory with containerd, raild and two pods: %s", memAvailable())
	runtimeDefault := plainView.memlock

	view := n.probe(t, app, dev)
	t.Run("the injected nodes are the guest's, and only them", func(t *testing.T) {
		want := map[string]string{uverbs: uverbsNode, "rdma_cm": guestDevNode(t, "rdma_cm")}
		if !maps.Equal(view.nodes, want) {
			t.Errorf("/dev/infiniband in the container: %v, want exactly the guest's %v", view.nodes, want)
		}
	})
	t.Run("ibv_devinfo opens the device", func(t *testing.T) {
		if view.devinfoErr || !strings.Contains(view.devinfo, "hca_id:\t"+dev) || !strings.Contains(view.devinfo, "PORT_ACTIVE") {
			t.Errorf("ibv_devinfo -d %s did not show the device with an active port (failed: %v):\n%s", dev, view.devinfoErr, view.devinfo)
		}
	})
	t.Run("ulimit -l is raild's memlock", func(t *testing.T) {
		if view.memlock != strconv.Itoa(memlockKiB) {
			t.Errorf("ulimit -l = %s in the container, want %d (nri.memlock)", view.memlock, memlockKiB)
		}
	})
	gidIdx, gidType, gidDev := gidIndexOf(t, dev, addr)
	t.Run("NCCL and UCX variables name the device and the rail address's GID", func(t *testing.T) {
		t.Logf("GID %d of %s holds %s: %s on %s", gidIdx, dev, addr, gidType, gidDev)
		if gidType != "RoCE v2" || gidDev != lease.ifName {
			t.Errorf("GID %d: type %q on %q, want RoCE v2 on the pod's %s", gidIdx, gidType, gidDev, lease.ifName)
		}
		for key, want := range map[string]string{"NCCL_IB_HCA": "=" + dev, "UCX_NET_DEVICES": dev + ":1",
			"NCCL_IB_GID_INDEX": strconv.Itoa(gidIdx)} {
			if got, ok := view.env[key]; !ok || got != want {
				t.Errorf("%s=%q (set: %v), want %q", key, got, ok, want)
			}
		}
	})
	pp := pingpong{dev: dev, gidIndex: gidIdx, size: mrBytes, iters: 1}
	t.Run("a buffer above the runtime's memlock registers only with raild's limit", func(t *testing.T) {
		if kib, err := strconv.Atoi(runtimeDefault); err != nil || kib*1024 >= mrBytes {
			t.Fatalf("the runtime's default memlock is %q KiB: the test needs it below %d bytes", runtimeDefault, mrBytes)
		}
		lowered := fmt.Sprintf("ulimit -l %s && exec %s", runtimeDefault, strings.Join(pp.args(), " "))
		out, err := n.exec(app, "sh", "-c", lowered)
		if err == nil || !strings.Contains(out+err.Error(), "Couldn't register MR") {
			t.Errorf("with the runtime's %s KiB, registering %d bytes should fail: %v\n%s", runtimeDefault, mrBytes, err, out)
		}
	})
	t.Run("RC data between two processes of the pod", func(t *testing.T) {
		sent := counter(t, filepath.Join("/sys/class/infiniband", dev, "ports/1/hw_counters/sent_pkts"))
		wire := counter(t, filepath.Join("/sys/class/net", peer, "statistics/rx_packets"))
		out := pp.run(t, n, app, addr.String())
		pp.wantIters(t, out)
		t.Logf("client:\n%s", out)
		packets := counter(t, filepath.Join("/sys/class/infiniband", dev, "ports/1/hw_counters/sent_pkts")) - sent
		onWire := counter(t, filepath.Join("/sys/class/net", peer, "statistics/rx_packets")) - wire
		t.Logf("%s sent %d RoCE packets; %d frames reached the far end of %s", dev, packets, onWire, parent)
		if packets < uint64(mrBytes/4096) || onWire >= packets/10 {
			t.Errorf("want the data carried by %s's own loopback: %d packets sent, %d frames on the wire", dev, packets, onWire)
		}
	})
	t.Run("a pod without a lease gets nothing", func(t *testing.T) {
		if l := plain.leasesOf(t); len(l) != 0 {
			t.Fatalf("the pod without GPU or annotation holds leases: %v", l)
		}
		if len(plainView.nodes) != 0 {
			t.Errorf("/dev/infiniband in the container: %v", plainView.nodes)
		}
		if plainView.memlock == strconv.Itoa(memlockKiB) {
			t.Errorf("memlock %s KiB: raild's value, without a lease", plainView.memlock)
		}
		for _, key := range []string{"NCCL_IB_HCA", "UCX_NET_DEVICES", "NCCL_IB_GID_INDEX"} {
			if v, ok := plainView.env[key]; ok {
				t.Errorf("%s=%q was set", key, v)
			}
		}
		if !plainView.devinfoErr {
			t.Errorf("ibv_devinfo opened %s without its node:\n%s", dev, plainView.devinfo)
		}
		t.Logf("ibv_devinfo without the node:\n%s", plainView.devinfo)
	})
	t.Run("DEL and pod removal leave the guest as it was", func(t *testing.T) {
		netns := p.netnsPath(t)
		p.stop(t)
		plain.stop(t)
		if left := n.leases(t); len(left) != 0 {
			t.Errorf("leases left after DEL: %+v", left)
		}
		if d := snapshotGuest(t).diff(before); len(d) > 0 {
			t.Errorf("the guest changed after DEL:\n%s", strings.Join(d, "\n"))
		}
		p.remove(t)
		plain.remove(t)
		assertGone(t, netns)
		if d := snapshotGuest(t).diff(before); len(d) > 0 {
			t.Errorf("the guest changed after pod removal:\n%s", strings.Join(d, "\n"))
		}
	})
}
