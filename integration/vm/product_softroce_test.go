package vm

import (
	"context"
	"errors"
	"maps"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/netnstest"
	"github.com/railcni/rail/pkg/rdma"
	"github.com/railcni/rail/pkg/topology"
)

// TestSoftRoCEProduct runs the product on a node in softRoCE mode, in
// shared RDMA netns mode: the node's NIC is the guest's virtio-net NIC,
// which has no RDMA device (placement places it by its netdev), and each
// pod gets an rxe of its own, made by rail inside the pod's netns on its
// rail interface — first a macvlan child,
// then (after the macvlan pod went: a port takes macvlan or ipvlan
// children, not both) an ipvlan child. For each: the pod's rxe lives in
// its netns on rail0; the container holds exactly that rxe's uverbs and
// rdma_cm, ibv_devinfo opens it, and its env names it with the GID index
// of the pod's address in the rxe's own table; doctor --pod passes every
// check against it; DEL leaves no rxe and the guest as it was. raild
// restarted after SIGKILL keeps a leased pod's rxe and sweeps one no lease
// explains. Before all that, raild refuses to start while an rxe of the
// guest's netns sits on the NIC (a stand-in, as softRoCE nodes once
// needed), naming it and `rdma link delete`.
func TestSoftRoCEProduct(t *testing.T) {
	requireBoot(t, rdma.NetnsShared)
	s := &softNode{n: requireGuestNode(t), nic: useGuestNIC(t)}
	config := raildConfig(s.n, "10.78.0.0/24") + "softRoCE: true\n"
	t.Run("a stand-in rxe on the NIC stops raild", func(t *testing.T) { s.checkStandInRefused(t, config) })
	s.n.start(t, chainedConflist(s.n, "macvlan"), config)
	s.n.importVerbsImage(t)
	s.before = snapshotGuest(t)
	for _, mode := range []string{"macvlan", "ipvlan"} {
		t.Run(mode, func(t *testing.T) {
			if mode != "macvlan" {
				s.useMode(t, mode)
			}
			p := s.attach(t, "soft-"+mode, mode)
			t.Run("the pod's rxe lives in its netns on rail0", p.checkDevice)
			t.Run("the container holds exactly that rxe's nodes and opens it", p.checkNodes)
			t.Run("the env names the rxe and its GID of the pod's address", p.checkEnv)
			t.Run("doctor --pod passes against the pod's rxe", p.checkReady)
			if mode == "ipvlan" {
				t.Run("raild after SIGKILL keeps the pod's rxe and sweeps a stale one", p.checkSweep)
			}
			t.Run("DEL leaves no rxe and the guest as it was", p.checkTeardown)
		})
	}
}

// softNode is the softRoCE node of TestSoftRoCEProduct.
type softNode struct {
	n      *guestNode
	nic    string // the guest's NIC (virtio-net, no RDMA device): placed by its netdev
	before guestState
}

// checkStandInRefused: with an rxe made in the guest's netns on the NIC,
// `raild serve` in softRoCE mode exits at start naming the rxe and the fix;
// the rxe is deleted again.
func (s *softNode) checkStandInRefused(t *testing.T, config string) {
	standIn := netnstest.UniqueName(t, "rvs")
	h := rdmaHandle(t, nil)
	addRxe(t, h, standIn, s.nic)
	dir := t.TempDir()
	file := filepath.Join(dir, "raild.yaml")
	if err := os.WriteFile(file, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, filepath.Join(s.n.railBin, "raild"), "serve", "--config", file, "--root", "/",
		"--socket", filepath.Join(dir, "raild.sock"), "--state-dir", filepath.Join(dir, "state"), "--node-name", "rail-vm").CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || ctx.Err() != nil {
		t.Fatalf("raild with %s on %s: %v, want it to exit at start:\n%s", standIn, s.nic, err, out)
	}
	t.Logf("raild with %s on %s: %v:\n%s", standIn, s.nic, err, out)
	for _, want := range []string{standIn, s.nic, "rdma link delete " + standIn} {
		if !strings.Contains(string(out), want) {
			t.Errorf("raild's refusal does not name %q:\n%s", want, out)
		}
	}
	if err := h.RdmaLinkDel(standIn); err != nil {
		t.Fatalf("rdma link delete %s: %v", standIn, err)
	}
}

// softPod is one pod of the softRoCE node with its lease, its rxe and a
// container's view of RDMA.
type softPod struct {
	s      *softNode
	p      *pod
	mode   string
	lease  leaseInfo
	addr   netip.Addr
	dev    string // the pod's rxe
	uverbs string
	node   string // its uverbs node as the guest has it
	gid    gidEntry
	view   containerView
}

// useMode switches the node's conflist to rail in mode and waits until
// containerd has loaded it.
func (s *softNode) useMode(t *testing.T, mode string) {
	t.Helper()
	list := filepath.Join(s.n.run, "cni/net.d/10-rail-vm.conflist")
	data, err := os.ReadFile(list)
	if err != nil {
		t.Fatal(err)
	}
	next := strings.Replace(string(data), `"mode": "macvlan"`, `"mode": "`+mode+`"`, 1)
	if next == string(data) {
		t.Fatalf("conflist %s names no macvlan mode:\n%s", list, data)
	}
	if err := os.WriteFile(list, []byte(next), 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "containerd loads the "+mode+" conflist", func() bool {
		out, err := s.n.crictl("info")
		return err == nil && strings.Contains(out, mode) // "ipvlan" is no part of "macvlan"
	})
}

// attach runs a pod that asks for rail and a container in it.
func (s *softNode) attach(t *testing.T, name, mode string) *softPod {
	t.Helper()
	p := &softPod{s: s, mode: mode, p: s.n.mustRunPod(t, name, map[string]string{api.AnnotationAttach: "true"})}
	p.lease = p.p.leaseOf(t)
	if !slices.Equal(p.lease.nics, []string{s.nic}) || p.lease.mode != mode {
		t.Fatalf("lease %v: want the NIC %s (its netdev) in %s mode", p.lease, s.nic, mode)
	}
	p.addr = netip.MustParsePrefix(p.lease.address).Addr()
	p.dev = rdma.SoftRoCEName(p.p.id, p.lease.ifName)
	p.uverbs, p.node = uverbsOf(t, p.dev)
	p.gid = gidEntryOf(t, p.dev, p.addr)
	ctr := p.p.startContainer(t, "app", verbsImage)
	p.view = s.n.probe(t, ctr, p.dev)
	return p
}

// checkDevice: the kernel lists the rxe in the pod's netns, bound to the
// pod's rail0, its port ACTIVE.
func (p *softPod) checkDevice(t *testing.T) {
	in, err := rdma.InNetns(p.p.netnsPath(t), p.dev)
	if err != nil || !in {
		t.Errorf("rxe %s in the pod's netns: %v, %v", p.dev, in, err)
	}
	parent, err := os.ReadFile("/sys/class/infiniband/" + p.dev + "/parent")
	if err != nil || strings.TrimSpace(string(parent)) != p.lease.ifName {
		t.Errorf("rxe %s is on %q (%v), want the pod's %s", p.dev, parent, err, p.lease.ifName)
	}
	state, err := os.ReadFile("/sys/class/infiniband/" + p.dev + "/ports/1/state")
	if err != nil || !strings.Contains(string(state), topology.PortActive) {
		t.Errorf("rxe %s port 1: %q (%v), want ACTIVE", p.dev, state, err)
	}
}

// checkNodes: /dev/infiniband in the container is the pod's rxe's uverbs
// and rdma_cm, nothing else, and ibv_devinfo opens it.
func (p *softPod) checkNodes(t *testing.T) {
	want := map[string]string{p.uverbs: p.node, "rdma_cm": guestDevNode(t, "rdma_cm")}
	if !maps.Equal(p.view.nodes, want) {
		t.Errorf("/dev/infiniband in the container: %v, want exactly %v (the pod's %s)", p.view.nodes, want, p.dev)
	}
	if p.view.devinfoErr || !strings.Contains(p.view.devinfo, "hca_id:\t"+p.dev) || !strings.Contains(p.view.devinfo, "PORT_ACTIVE") {
		t.Errorf("ibv_devinfo -d %s (failed: %v):\n%s", p.dev, p.view.devinfoErr, p.view.devinfo)
	}
}

// checkEnv: the NCCL, UCX and Mooncake variables name the pod's rxe and
// the GID index the kernel gave the pod's address (RoCE v2, on rail0);
// UCX's DGID check is off; UCX_TLS is never set.
func (p *softPod) checkEnv(t *testing.T) {
	g := p.gid
	t.Logf("GID %d of %s holds %s: %s on %s", g.index, p.dev, p.addr, g.kind, g.netdev)
	if g.kind != "RoCE v2" || g.netdev != p.lease.ifName {
		t.Errorf("GID %d: %q on %q, want RoCE v2 on %s", g.index, g.kind, g.netdev, p.lease.ifName)
	}
	idx := strconv.Itoa(g.index)
	want := map[string]string{"NCCL_IB_HCA": "=" + p.dev, "UCX_NET_DEVICES": p.dev + ":1", "MC_MS_FILTERS": p.dev,
		"NCCL_IB_GID_INDEX": idx, "UCX_IB_GID_INDEX": idx, "MC_GID_INDEX": idx, "UCX_UD_ETH_DGID_CHECK": "n"}
	for key, w := range want {
		if got, ok := p.view.env[key]; !ok || got != w {
			t.Errorf("%s=%q (set: %v), want %q", key, got, ok, w)
		}
	}
	if v, ok := p.view.env["UCX_TLS"]; ok {
		t.Errorf("UCX_TLS=%q set: rail never sets it", v)
	}
}

// checkReady: every readiness check passes, against the pod's rxe.
func (p *softPod) checkReady(t *testing.T) {
	r := p.p.waitReport(t, "container app started and every check passing", func(r *api.PodReport) bool {
		return startedIn(r, "app") && r.Ready
	})
	for _, name := range []string{"interface", "address", "port", "link-layer", "gid"} {
		wantCheck(t, r, name, p.lease.ifName, api.CheckPass, "")
	}
	for _, name := range []string{"device-nodes", "memlock"} {
		wantCheck(t, r, name, "container app", api.CheckPass, "")
	}
	if len(r.Interfaces) != 1 || r.Interfaces[0].NIC == nil || r.Interfaces[0].GIDIndex == nil ||
		*r.Interfaces[0].GIDIndex != p.gid.index || r.Interfaces[0].PortState != topology.PortActive {
		t.Errorf("doctor --pod interfaces: %s\nwant %s's port ACTIVE, GID index %d", reportText(r), p.dev, p.gid.index)
	}
}

// checkSweep: raild killed with the pod attached and started again keeps
// the pod's rxe (its lease explains it) and deletes an rxe rail named for a
// sandbox that holds no lease, left in a live netns.
func (p *softPod) checkSweep(t *testing.T) {
	stray := newNetns(t)
	a, b := netnstest.UniqueName(t, "rst"), netnstest.UniqueName(t, "rsu")
	veth := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: a}, PeerName: b}
	if err := netlink.LinkAdd(veth); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = netlink.LinkDel(veth) })
	link, err := netlink.LinkByName(a)
	if err == nil {
		err = netlink.LinkSetNsFd(link, int(stray.Fd()))
	}
	if err != nil {
		t.Fatal(err)
	}
	staleName := rdma.SoftRoCEName("no-such-sandbox", "rail0")
	if err := rdma.AddSoftRoCE(stray.Path(), staleName, a); err != nil {
		t.Fatal(err)
	}
	p.s.n.restartRaild(t, syscall.SIGKILL)
	waitFor(t, "raild's sweep deletes "+staleName, func() bool {
		return !slices.Contains(rdmaDevices(t, rdmaHandle(t, nil)), staleName)
	})
	if !slices.Contains(rdmaDevices(t, rdmaHandle(t, nil)), p.dev) {
		t.Errorf("the pod's rxe %s is gone after the restart: its lease holds it", p.dev)
	}
	if !strings.Contains(readText(p.s.n.raildLog), staleName) {
		t.Errorf("raild's log does not name the stale %s it deleted", staleName)
	}
}

// checkTeardown: DEL deletes the pod's rxe and frees the lease; the guest
// is as before the pod (links, addresses, routes, RDMA devices, device
// nodes, GID tables).
func (p *softPod) checkTeardown(t *testing.T) {
	netns := p.p.netnsPath(t)
	p.p.stop(t)
	for _, d := range rdmaDevices(t, rdmaHandle(t, nil)) {
		if topology.IsPodSoftRoCE(d) {
			t.Errorf("rxe %s left after DEL", d)
		}
	}
	if left := p.s.n.leases(t); len(left) != 0 {
		t.Errorf("leases left after DEL: %+v", left)
	}
	p.p.remove(t)
	assertGone(t, netns)
	if d := snapshotGuest(t).diff(p.s.before); len(d) > 0 {
		t.Errorf("the guest changed:\n%s", strings.Join(d, "\n"))
	}
}
