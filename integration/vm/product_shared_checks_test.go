package vm

import (
	"fmt"
	"maps"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// checkNodes: the leased container's /dev/infiniband is exactly the rxe's
// uverbs and rdma_cm, with the guest's types and numbers.
func (s *sharedNode) checkNodes(t *testing.T) {
	want := map[string]string{s.uverbs: s.uverbsNode, "rdma_cm": guestDevNode(t, "rdma_cm")}
	if !maps.Equal(s.view.nodes, want) {
		t.Errorf("/dev/infiniband in the container: %v, want exactly the guest's %v", s.view.nodes, want)
	}
}

func (s *sharedNode) checkDevinfo(t *testing.T) {
	v := s.view
	if v.devinfoErr || !strings.Contains(v.devinfo, "hca_id:\t"+s.dev) || !strings.Contains(v.devinfo, "PORT_ACTIVE") {
		t.Errorf("ibv_devinfo -d %s did not show the device with an active port (failed: %v):\n%s", s.dev, v.devinfoErr, v.devinfo)
	}
}

func (s *sharedNode) checkMemlock(t *testing.T) {
	if s.view.memlock != strconv.Itoa(memlockKiB) {
		t.Errorf("ulimit -l = %s in the container, want %d (nri.memlock)", s.view.memlock, memlockKiB)
	}
}

// checkEnv: NCCL_IB_HCA and UCX_NET_DEVICES name the rxe, NCCL_IB_GID_INDEX
// is the kernel's RoCE v2 GID of the pod's rail address.
func (s *sharedNode) checkEnv(t *testing.T) {
	g := s.gid
	t.Logf("GID %d of %s holds %s: %s on %s", g.index, s.dev, s.addr, g.kind, g.netdev)
	if g.kind != "RoCE v2" || g.netdev != s.lease.ifName {
		t.Errorf("GID %d: type %q on %q, want RoCE v2 on the pod's %s", g.index, g.kind, g.netdev, s.lease.ifName)
	}
	for key, want := range map[string]string{"NCCL_IB_HCA": "=" + s.dev, "UCX_NET_DEVICES": s.dev + ":1",
		"NCCL_IB_GID_INDEX": strconv.Itoa(g.index)} {
		if got, ok := s.view.env[key]; !ok || got != want {
			t.Errorf("%s=%q (set: %v), want %q", key, got, ok, want)
		}
	}
}

// checkRegistrationNeedsLimit: under the runtime's default memlock (the
// ordinary pod's `ulimit -l`) the same program cannot register mrBytes.
func (s *sharedNode) checkRegistrationNeedsLimit(t *testing.T) {
	runtimeDefault := s.plainView.memlock
	if kib, err := strconv.Atoi(runtimeDefault); err != nil || kib*1024 >= mrBytes {
		t.Fatalf("the runtime's default memlock is %q KiB: the test needs it below %d bytes", runtimeDefault, mrBytes)
	}
	lowered := fmt.Sprintf("ulimit -l %s && exec %s", runtimeDefault, strings.Join(s.pingpong().args(), " "))
	out, err := s.n.exec(s.app, "sh", "-c", lowered)
	if err == nil || !strings.Contains(out+err.Error(), "Couldn't register MR") {
		t.Errorf("with the runtime's %s KiB, registering %d bytes should fail: %v\n%s", runtimeDefault, mrBytes, err, out)
	}
}

// checkRCData: with raild's limit both processes register mrBytes and move
// it over RC; rxe's counters and the veth peer's show the path (no wire).
func (s *sharedNode) checkRCData(t *testing.T) {
	sentPkts := filepath.Join("/sys/class/infiniband", s.dev, "ports/1/hw_counters/sent_pkts")
	peerRx := filepath.Join("/sys/class/net", s.peer, "statistics/rx_packets")
	sent, wire := counter(t, sentPkts), counter(t, peerRx)
	pp := s.pingpong()
	out := pp.run(t, s.n, s.app, s.addr.String())
	pp.wantIters(t, out)
	t.Logf("client:\n%s", out)
	packets, onWire := counter(t, sentPkts)-sent, counter(t, peerRx)-wire
	t.Logf("%s sent %d RoCE packets; %d frames reached the far end of %s", s.dev, packets, onWire, s.parent)
	if packets < uint64(mrBytes/4096) || onWire >= packets/10 {
		t.Errorf("want the data carried by %s's own loopback: %d packets sent, %d frames on the wire", s.dev, packets, onWire)
	}
}

// checkPlainPod: the ordinary pod holds no lease and its container got no
// node, no limit and no variable.
func (s *sharedNode) checkPlainPod(t *testing.T) {
	v := s.plainView
	if l := s.plain.leasesOf(t); len(l) != 0 {
		t.Fatalf("the pod without GPU or annotation holds leases: %v", l)
	}
	if len(v.nodes) != 0 {
		t.Errorf("/dev/infiniband in the container: %v", v.nodes)
	}
	if v.memlock == strconv.Itoa(memlockKiB) {
		t.Errorf("memlock %s KiB: raild's value, without a lease", v.memlock)
	}
	for _, key := range []string{"NCCL_IB_HCA", "UCX_NET_DEVICES", "NCCL_IB_GID_INDEX", "NCCL_SOCKET_IFNAME", "NCCL_IB_ADDR_RANGE", "NCCL_TOPO_FILE"} {
		if val, ok := v.env[key]; ok {
			t.Errorf("%s=%q was set", key, val)
		}
	}
	if !v.devinfoErr {
		t.Errorf("ibv_devinfo opened %s without its node:\n%s", s.dev, v.devinfo)
	}
	t.Logf("ibv_devinfo without the node:\n%s", v.devinfo)
}

// checkTeardown: after CNI DEL (stopp), and again after removal (rmp), no
// lease is left and the guest is as it was before the pods.
func (s *sharedNode) checkTeardown(t *testing.T) {
	netns := s.leased.netnsPath(t)
	s.leased.stop(t)
	s.plain.stop(t)
	if left := s.n.leases(t); len(left) != 0 {
		t.Errorf("leases left after DEL: %+v", left)
	}
	if d := snapshotGuest(t).diff(s.before); len(d) > 0 {
		t.Errorf("the guest changed after DEL:\n%s", strings.Join(d, "\n"))
	}
	s.leased.remove(t)
	s.plain.remove(t)
	assertGone(t, netns)
	if d := snapshotGuest(t).diff(s.before); len(d) > 0 {
		t.Errorf("the guest changed after pod removal:\n%s", strings.Join(d, "\n"))
	}
}
