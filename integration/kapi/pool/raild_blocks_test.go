package pool

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"

	"github.com/railcni/rail/pkg/api"
)

// soloPool gives one labelled node a block of a single address, so two
// pods exhaust it.
const soloPool = `
apiVersion: rail.dev/v1alpha1
kind: RailPool
metadata:
  name: solo
spec:
  subnet: 10.63.0.0/30
  blockSize: 31
  nodeSelector:
    matchLabels:
      rail.dev/solo: "yes"
`

// TestRaildRailPools: 20 raild processes started at once against one API
// server, each with no pool of its own, serve 20 disjoint blocks of the
// RailPool; a restarted raild serves the same block; a block whose
// addresses are all leased makes STATUS unhealthy; a raild whose pool has
// no block left refuses to start, naming the pool and the fix.
func TestRaildRailPools(t *testing.T) {
	bin := buildRaild(t)
	c := newCluster(t)
	kubeconfig := c.kubeconfigAs(t)
	c.createPool(t, decodePool)
	var railds []*raildProc
	for i := range claimers {
		name := fmt.Sprintf("gpu-%02d", i)
		c.createNode(t, name, map[string]string{"rail.dev/gpu": "h100"})
		railds = append(railds, startRaild(t, bin, kubeconfig, name))
	}
	byNode := map[string]netip.Prefix{}
	for _, r := range railds {
		r.ready(t)
	}
	for _, b := range c.blocks(t, "decode") {
		byNode[b.Spec.Node] = netip.MustParsePrefix(b.Spec.Subnet)
	}
	seen := map[netip.Addr]string{}
	for _, r := range railds {
		addr, err := r.allocate("sb-"+r.node, "decode")
		if err != nil {
			t.Fatalf("raild %s: allocate from decode: %v", r.node, err)
		}
		if !byNode[r.node].Contains(addr) {
			t.Errorf("raild %s handed out %s, outside its block %s", r.node, addr, byNode[r.node])
		}
		if other, dup := seen[addr]; dup {
			t.Errorf("%s handed out by %s and %s", addr, other, r.node)
		}
		seen[addr] = r.node
	}
	if len(byNode) != claimers {
		t.Fatalf("%d nodes hold blocks, want %d", len(byNode), claimers)
	}

	t.Run("a restarted raild serves its block", func(t *testing.T) {
		r := railds[3]
		r.restart(t)
		addr, err := r.allocate("sb-after-restart", "decode")
		if err != nil || !byNode[r.node].Contains(addr) {
			t.Fatalf("after restart: %s, %v; want an address of %s", addr, err, byNode[r.node])
		}
		if n := len(c.blocks(t, "decode")); n != claimers {
			t.Errorf("%d blocks after the restart, want %d", n, claimers)
		}
	})
	t.Run("a block with every address leased makes STATUS unhealthy", func(t *testing.T) {
		c.createPool(t, soloPool)
		c.createNode(t, "solo-0", map[string]string{"rail.dev/solo": "yes"})
		r := startRaild(t, bin, kubeconfig, "solo-0")
		r.ready(t)
		if _, err := r.allocate("sb-1", "solo"); err != nil {
			t.Fatal(err)
		}
		_, err := r.allocate("sb-2", "solo")
		st, stErr := r.client.Status(t.Context(), "")
		if apiErr, ok := err.(*api.Error); !ok || apiErr.Code != api.CodePoolExhausted || stErr != nil || st.Healthy ||
			!strings.Contains(st.Reason, "pool solo is exhausted") {
			t.Fatalf("second allocation: %v; status %+v, %v; want pool solo exhausted in both", err, st, stErr)
		}
	})
	t.Run("a pool with no block left stops raild with the fix", func(t *testing.T) {
		for _, name := range []string{"solo-1", "solo-2"} {
			c.createNode(t, name, map[string]string{"rail.dev/solo": "yes"})
		}
		startRaild(t, bin, kubeconfig, "solo-1").ready(t)
		log := startRaild(t, bin, kubeconfig, "solo-2").exited(t)
		want := `railpool "solo" is exhausted: all 2 blocks (/31) of 10.63.0.0/30 are held by other nodes, none left for node "solo-2"`
		if !strings.Contains(log, want) || !strings.Contains(log, "widen spec.subnet") {
			t.Fatalf("raild for solo-2 logged:\n%s\nwant %s and the fix", log, want)
		}
	})
}
