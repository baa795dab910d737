package vm

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/netnstest"
	"github.com/railcni/rail/pkg/rdma"
)

// TestRestartWithNICInPodExclusive runs the product in exclusive RDMA
// netns mode with rail in move mode, gives a pod a NIC (its netdev and its
// RDMA device), restarts raild while the pod holds it (after SIGTERM, then
// after SIGKILL), and checks that the new raild knows the NIC as the pod's
// although the host no longer shows either half of it: `raild topo` and
// `raild doctor` name the pod, a new container of the pod gets the NIC's
// device nodes, and the pod's deletion returns the netdev under its own
// name and the RDMA device to the guest's netns.
//
// The NIC is built as a hardware RoCE NIC is: a PCI netdev (the guest's
// virtio NIC) whose RDMA device survives the netdev's move. An rxe dies
// with its own netdev (TestAttachMoveOfRxeNetdev), so the rxe sits on a
// veth that stays in the guest, and the two sysfs attributes raild pairs
// an RDMA device with its netdev by (the rxe's `parent` and GID 0's
// netdev) are bind-mounted to name the virtio NIC, as an mlx5 device's
// name its PCI function's netdev. Everything else is the kernel's: the
// moves, the RDMA device vanishing from the host's sysfs, its char devices
// staying, the containers opening it.
func TestRestartWithNICInPodExclusive(t *testing.T) {
	requireBoot(t, rdma.NetnsExclusive)
	r := setupRestart(t)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		t.Run("raild restarted after "+unix.SignalName(sig), func(t *testing.T) {
			from := r.n.restartRaild(t, sig)
			r.checkKnown(t, from)
			r.checkNewContainer(t, "after-"+strings.ToLower(unix.SignalName(sig)))
		})
	}
	t.Run("DEL returns the NIC under its name and the RDMA device to the guest", r.checkTeardown)
}

// restartNode is the node of TestRestartWithNICInPodExclusive once its pod
// holds the NIC.
type restartNode struct {
	n          *guestNode
	nic, dev   string // the virtio NIC and the rxe paired with it
	nodes      map[string]string
	nicBefore  linkState
	before     guestState
	unpair     func()
	held       *pod
	holderName string // the pod as raild names holders
}

// setupRestart pairs an rxe with the guest's NIC, starts containerd and
// raild, runs a pod that asks for rail and checks it got the NIC and its
// RDMA device, and a container of it the device nodes.
func setupRestart(t *testing.T) *restartNode {
	r := &restartNode{n: requireGuestNode(t), nic: useGuestNIC(t), dev: netnstest.UniqueName(t, "rvx")}
	rxeNetdev, _ := addVethPair(t)
	addRxe(t, rdmaHandle(t, nil), r.dev, rxeNetdev)
	uverbs, uverbsNode := uverbsOf(t, r.dev)
	r.nodes = map[string]string{uverbs: uverbsNode, "rdma_cm": guestDevNode(t, "rdma_cm")}
	r.nicBefore = hostLinkState(t, r.nic)
	r.before = snapshotGuest(t)
	r.unpair = pairLikeHardware(t, r.dev, r.nic)
	r.n.start(t, chainedConflist(r.n, "move"), raildConfig(r.n, "10.79.0.0/24"))
	r.n.importVerbsImage(t)

	r.held = r.n.mustRunPod(t, "held", map[string]string{api.AnnotationAttach: "true"})
	r.holderName = podNamespace + "/" + r.held.name
	if l := r.held.leaseOf(t); !slices.Equal(l.nics, []string{r.dev}) || l.mode != "move" {
		t.Fatalf("lease %v: want %s in move mode", l, r.dev)
	}
	if _, err := netlink.LinkByName(r.nic); !isNotFound(err) {
		t.Fatalf("%s is still in the guest's netns after ADD (err %v)", r.nic, err)
	}
	if slices.Contains(rdmaDevices(t, rdmaHandle(t, nil)), r.dev) {
		t.Fatalf("%s is still in the guest's netns after ADD", r.dev)
	}
	r.checkNewContainer(t, "app")
	return r
}

// pairLikeHardware makes sysfs name netdev as the RDMA device dev's: its
// `parent` and its port 1 GID 0 netdev, by bind mounts over the two
// attributes. It returns the undo, also registered as a cleanup.
func pairLikeHardware(t *testing.T, dev, netdev string) func() {
	t.Helper()
	src := filepath.Join(t.TempDir(), "netdev")
	if err := os.WriteFile(src, []byte(netdev+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir, err := filepath.EvalSymlinks(filepath.Join("/sys/class/infiniband", dev))
	if err != nil {
		t.Fatalf("%s in sysfs: %v", dev, err)
	}
	targets := []string{filepath.Join(dir, "parent"), filepath.Join(dir, "ports/1/gid_attrs/ndevs/0")}
	undo := func() {
		for _, target := range targets {
			_ = unix.Unmount(target, unix.MNT_DETACH) // EINVAL once undone
		}
	}
	t.Cleanup(undo)
	for _, target := range targets {
		if err := unix.Mount(src, target, "", unix.MS_BIND, ""); err != nil {
			t.Fatalf("bind %s over %s: %v", src, target, err)
		}
	}
	return undo
}
