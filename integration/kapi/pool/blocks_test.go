package pool

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// decodePool is the RailPool example in docs/pools.md: 32 blocks of /27, one per
// GPU node.
const decodePool = `
apiVersion: rail.dev/v1alpha1
kind: RailPool
metadata:
  name: decode
spec:
  subnet: 10.60.0.0/22
  blockSize: 27
  gateway: 10.60.0.1
  routes:
  - dst: 10.61.0.0/16
  rail: 0
  nodeSelector:
    matchLabels:
      rail.dev/gpu: h100
`

// tinyPool has two blocks for three nodes.
const tinyPool = `
apiVersion: rail.dev/v1alpha1
kind: RailPool
metadata:
  name: tiny
spec:
  subnet: 10.62.0.0/29
  blockSize: 30
  nodeSelector:
    matchLabels:
      rail.dev/tiny: "yes"
`

const claimers = 20

// TestRailPoolBlocks: 20 nodes claiming at once get 20 disjoint blocks,
// through the chart's RBAC; a restart keeps the block; a block is freed
// with its Node (garbage collector) and not before; a pool with no block
// left and a name clash with a config pool are refused with the fix.
func TestRailPoolBlocks(t *testing.T) {
	c := newCluster(t)
	nodes := map[string]*corev1.Node{}
	for i := range claimers {
		name := fmt.Sprintf("gpu-%02d", i)
		nodes[name] = c.createNode(t, name, map[string]string{"rail.dev/gpu": "h100"})
	}
	c.createNode(t, "cpu-0", nil)
	c.createPool(t, decodePool)

	held := claimAtOnce(t, c, nodes)
	t.Run("blocks are objects owned by their nodes", func(t *testing.T) {
		blocks := c.blocks(t, "decode")
		if len(blocks) != claimers {
			t.Fatalf("%d blocks in the API server, want %d", len(blocks), claimers)
		}
		for name, b := range blocks {
			n := nodes[b.Spec.Node]
			if n == nil || held[b.Spec.Node].Block != name || b.Spec.Subnet != held[b.Spec.Node].Subnet.String() ||
				len(b.OwnerReferences) != 1 || b.OwnerReferences[0].UID != n.UID || b.OwnerReferences[0].Kind != "Node" {
				t.Errorf("block %s = %+v, owners %+v: want it to be what node %s claimed, owned by that Node", name, b.Spec, b.OwnerReferences, b.Spec.Node)
			}
		}
	})
	t.Run("a node the selector leaves out gets no block", func(t *testing.T) {
		out, err := claim(t, c.Kubeconfig, c.as, "cpu-0")
		if err != nil || len(out.Claims) != 0 || len(out.Sizes) != 0 {
			t.Fatalf("cpu-0: %+v, %v; want no pools", out, err)
		}
	})
	t.Run("a restart keeps its block", func(t *testing.T) {
		out, err := claim(t, c.Kubeconfig, c.as, "gpu-05")
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Claims) != 1 || !out.Claims[0].Kept || out.Claims[0].Subnet != held["gpu-05"].Subnet {
			t.Fatalf("gpu-05 after restart: %+v; want block %s kept", out.Claims, held["gpu-05"].Subnet)
		}
		if n := len(c.blocks(t, "decode")); n != claimers {
			t.Errorf("%d blocks after the restart, want %d", n, claimers)
		}
	})
	t.Run("a config pool of the same name is an error", func(t *testing.T) {
		_, err := claim(t, c.Kubeconfig, c.as, "gpu-06", envConfig+"=decode")
		want := `railpool "decode": raild's config has a pool of the same name (pools[0]): pool names are one namespace, rename the RailPool or remove the config pool`
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("err = %v, want %q", err, want)
		}
	})
	t.Run("an exhausted pool names itself and the fix", func(t *testing.T) {
		c.createPool(t, tinyPool)
		for _, name := range []string{"tiny-0", "tiny-1", "tiny-2"} {
			c.createNode(t, name, map[string]string{"rail.dev/tiny": "yes"})
		}
		for _, name := range []string{"tiny-0", "tiny-1"} {
			if out, err := claim(t, c.Kubeconfig, c.as, name); err != nil || len(out.Claims) != 1 {
				t.Fatalf("%s: %+v, %v; want one block of tiny", name, out, err)
			}
		}
		_, err := claim(t, c.Kubeconfig, c.as, "tiny-2")
		want := `railpool "tiny" is exhausted: all 2 blocks (/30) of 10.62.0.0/29 are held by other nodes, none left for node "tiny-2"`
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "widen spec.subnet") {
			t.Fatalf("err = %v, want %q and the fix", err, want)
		}
	})
	t.Run("a block is freed with its Node and not before", func(t *testing.T) {
		c.StartControllerManager(t, "garbagecollector")
		gone := held["gpu-07"]
		if err := c.Clients.Kube.CoreV1().Nodes().Delete(context.Background(), "gpu-07", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		waitFor(t, 2*time.Minute, "the garbage collector to delete block "+gone.Block, func() bool {
			_, still := c.blocks(t, "decode")[gone.Block]
			return !still
		})
		blocks := c.blocks(t, "decode")
		for node, cl := range held {
			if _, kept := blocks[cl.Block]; !kept && node != "gpu-07" {
				t.Errorf("block %s of node %s (still there) was deleted", cl.Block, node)
			}
		}
		if len(c.blocks(t, "tiny")) != 2 {
			t.Errorf("tiny has %d blocks, want its 2 (their nodes are there)", len(c.blocks(t, "tiny")))
		}
		c.createNode(t, "gpu-07", map[string]string{"rail.dev/gpu": "h100"})
		out, err := claim(t, c.Kubeconfig, c.as, "gpu-07")
		if err != nil || len(out.Claims) != 1 || out.Claims[0].Subnet != gone.Subnet || out.Claims[0].Kept {
			t.Fatalf("gpu-07 back: %+v, %v; want the freed block %s claimed anew", out, err, gone.Subnet)
		}
	})
}

// claimAtOnce starts one claimer per node, lets them claim together and
// checks they got disjoint blocks of the right size.
func claimAtOnce(t *testing.T, c *cluster, nodes map[string]*corev1.Node) map[string]claimOf {
	gate := filepath.Join(t.TempDir(), "go")
	var procs []*claimProc
	for name := range nodes {
		procs = append(procs, startClaim(t, c.Kubeconfig, c.as, name, envGo+"="+gate))
	}
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	held := map[string]claimOf{}
	bySubnet := map[netip.Prefix]string{}
	attempts := 0
	subnet := netip.MustParsePrefix("10.60.0.0/22")
	for _, p := range procs {
		out, err := p.wait()
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Claims) != 1 || out.Claims[0].Pool != "decode" || out.Claims[0].Kept {
			t.Fatalf("node %s: claims %+v, want one new block of decode", p.node, out.Claims)
		}
		cl := out.Claims[0]
		if other, dup := bySubnet[cl.Subnet]; dup {
			t.Errorf("block %s given to %s and %s", cl.Subnet, other, p.node)
		}
		want := uint64(32)
		if cl.Subnet.Contains(netip.MustParseAddr("10.60.0.1")) {
			want = 30 // the pool's network address and gateway fall in it
		}
		if cl.Subnet.Bits() != 27 || !subnet.Contains(cl.Subnet.Addr()) || out.Sizes["decode"] != want {
			t.Errorf("node %s: block %s, %d addresses; want a /27 of %s with %d", p.node, cl.Subnet, out.Sizes["decode"], subnet, want)
		}
		bySubnet[cl.Subnet] = p.node
		held[p.node] = claimOf{Block: cl.Block, Subnet: cl.Subnet}
		attempts += cl.Attempts
	}
	t.Logf("%d claimers took %d creates in all (each AlreadyExists is a block another node won first)", len(procs), attempts)
	return held
}

// claimOf is the block a node claimed.
type claimOf struct {
	Block  string
	Subnet netip.Prefix
}

func waitFor(t *testing.T, timeout time.Duration, what string, done func() bool) {
	t.Helper()
	for deadline := time.Now().Add(timeout); !done(); time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited %s for %s", timeout, what)
		}
	}
}
