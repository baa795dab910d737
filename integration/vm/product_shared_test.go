package vm

import (
	"net/netip"
	"slices"
	"testing"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/netnstest"
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
	s := setupShared(t)
	t.Run("the injected nodes are the guest's, and only them", s.checkNodes)
	t.Run("ibv_devinfo opens the device", s.checkDevinfo)
	t.Run("ulimit -l is raild's memlock", s.checkMemlock)
	t.Run("NCCL and UCX variables name the device and the rail address's GID", s.checkEnv)
	t.Run("doctor --pod: every readiness check passes against the rxe and the container", s.checkReady)
	t.Run("a buffer above the runtime's memlock registers only with raild's limit", s.checkRegistrationNeedsLimit)
	t.Run("RC data between two processes of the pod", s.checkRCData)
	t.Run("a pod without a lease gets nothing", s.checkPlainPod)
	t.Run("a container started without raild fails device-nodes and memlock: the pod is not ready", s.checkNotGiven)
	t.Run("DEL and pod removal leave the guest as it was", s.checkTeardown)
}

// sharedNode is the node of TestVerbsInPodShared once its two pods run.
type sharedNode struct {
	n                  *guestNode
	parent, peer       string // the veth pair; the rxe sits on parent
	dev                string // the rxe
	uverbs, uverbsNode string // its uverbs name and the guest's node ("type major:minor")
	before             guestState

	leased, plain   *pod
	lease           leaseInfo
	addr            netip.Addr // the leased pod's rail address
	gid             gidEntry   // the kernel's GID entry for addr
	app, plainApp   string     // a container in each pod
	view, plainView containerView
}

// setupShared makes the rxe, starts containerd and raild, and runs a pod
// that asks for rail (rail.dev/attach) and an ordinary one, each with a
// container of the verbs image.
func setupShared(t *testing.T) *sharedNode {
	s := &sharedNode{n: requireGuestNode(t), dev: netnstest.UniqueName(t, "rvx")}
	s.parent, s.peer = addVethPair(t)
	addRxe(t, rdmaHandle(t, nil), s.dev, s.parent)
	s.uverbs, s.uverbsNode = uverbsOf(t, s.dev)
	s.n.start(t, chainedConflist(s.n, "macvlan"), raildConfig(s.n, "10.77.0.0/24"))
	s.n.importVerbsImage(t)
	s.before = snapshotGuest(t)

	s.leased = s.n.mustRunPod(t, "verbs", map[string]string{api.AnnotationAttach: "true"})
	s.lease = s.leased.leaseOf(t)
	if !slices.Equal(s.lease.nics, []string{s.dev}) || s.lease.mode != "macvlan" {
		t.Fatalf("lease %v: want %s in macvlan mode", s.lease, s.dev)
	}
	s.addr = netip.MustParsePrefix(s.lease.address).Addr()
	s.gid = gidEntryOf(t, s.dev, s.addr)
	s.app = s.leased.startContainer(t, "app", verbsImage)
	s.plain = s.n.mustRunPod(t, "plain", nil) // no GPU, no annotation: rail passes it through
	s.plainApp = s.plain.startContainer(t, "app", verbsImage)
	t.Logf("guest memory with containerd, raild and two pods: %s", memAvailable())
	s.view = s.n.probe(t, s.app, s.dev)
	s.plainView = s.n.probe(t, s.plainApp, s.dev)
	return s
}

// pingpong is the RC exchange on the pod's GID with a buffer of mrBytes.
func (s *sharedNode) pingpong() pingpong {
	return pingpong{dev: s.dev, gidIndex: s.gid.index, size: mrBytes, iters: 1}
}
