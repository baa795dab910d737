package cri

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"

	"github.com/railcni/rail/integration/harness"
	"github.com/railcni/rail/pkg/netnstest"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

// fakeMachine is the simulated GPU node the rig's raild sees.
const fakeMachine = "h100x8-cx7x4"

// node is the fake machine: a sysfs/procfs root, /dev/infiniband nodes
// made with mknod, and one veth per NIC standing in for its netdev (the
// peer ends live in a namespace of their own).
type node struct {
	suffix  string
	root    string
	spec    *fakesys.Spec
	netdevs map[string]string // RDMA device -> host netdev
	peerNS  string
}

func randomSuffix(t *testing.T) string {
	t.Helper()
	b := make([]byte, 3)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// newNode builds the node under dir; cleanups are registered on t.
func newNode(t *testing.T, dir string) *node {
	t.Helper()
	n := &node{suffix: randomSuffix(t), root: filepath.Join(dir, "root"), netdevs: map[string]string{}}
	n.peerNS = "rail-e2e-" + n.suffix
	for i := 0; i < 4; i++ {
		n.netdevs[fmt.Sprintf("mlx5_%d", i)] = fmt.Sprintf("re%sn%d", n.suffix, i)
	}
	n.createVeths(t)
	spec, err := fakesys.Write(n.root, fakeMachine, fakesys.Options{Netdevs: n.netdevs, DevNumbers: harness.HarmlessDevNumbers()})
	if err != nil {
		t.Fatalf("fakesys.Write: %v", err)
	}
	n.spec = spec
	if err := harness.MakeDevNodes(spec); err != nil {
		t.Fatal(err)
	}
	return n
}

// createVeths makes the stand-in netdevs in the host namespace with their
// peers in a private namespace; removed on cleanup.
func (n *node) createVeths(t *testing.T) {
	t.Helper()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	host, err := netns.Get()
	if err != nil {
		t.Fatal(err)
	}
	defer host.Close()
	peer, err := netnstest.NewNamed(n.peerNS)
	if err != nil {
		t.Fatalf("creating netns %s: %v", n.peerNS, err)
	}
	defer peer.Close()
	if err := netns.Set(host); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.removeVeths(t) })
	for i := 0; i < 4; i++ {
		name := n.netdevs[fmt.Sprintf("mlx5_%d", i)]
		veth := &netlink.Veth{
			LinkAttrs:     netlink.LinkAttrs{Name: name},
			PeerName:      fmt.Sprintf("rp%sn%d", n.suffix, i),
			PeerNamespace: netlink.NsFd(int(peer)),
		}
		if err := netlink.LinkAdd(veth); err != nil {
			t.Fatalf("creating veth %s: %v", name, err)
		}
		if err := netlink.LinkSetUp(veth); err != nil {
			t.Fatalf("setting %s up: %v", name, err)
		}
	}
}

// removeVeths deletes whatever of ours is left in the host namespace (a
// NIC a failed run left in a pod comes back when that pod's netns goes)
// and the peer namespace, which takes the peers with it.
func (n *node) removeVeths(t *testing.T) {
	for _, name := range n.netdevs {
		if l, err := netlink.LinkByName(name); err == nil {
			if err := netlink.LinkDel(l); err != nil {
				t.Errorf("deleting %s: %v", name, err)
			}
		}
	}
	if err := netns.DeleteNamed(n.peerNS); err != nil {
		t.Errorf("deleting netns %s: %v", n.peerNS, err)
	}
}

// gpuUUIDs returns the UUIDs of the given GPU indices.
func (n *node) gpuUUIDs(t *testing.T, indices ...int) []string {
	t.Helper()
	var out []string
	for _, i := range indices {
		if i >= len(n.spec.GPUs) || n.spec.GPUs[i].UUID == "" {
			t.Fatalf("fake machine has no UUID for GPU %d", i)
		}
		out = append(out, n.spec.GPUs[i].UUID)
	}
	return out
}
