package railpool

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/railcni/rail/ipam"
)

func TestNodePools(t *testing.T) {
	gpu := map[string]string{"rail.dev/gpu": "h100"}
	// In a pool of 4 blocks n1 starts looking at block 0 and n4 at block 3
	// (startIndex: FNV-1a of the name).
	nodes := []*corev1.Node{node("n1", "uid-n1", gpu), node("n2", "uid-n2", gpu), node("n4", "uid-n4", gpu), node("cpu1", "uid-cpu1", nil)}
	onlyGPU := func(s *PoolSpec) { s.NodeSelector = &metav1.LabelSelector{MatchLabels: gpu} }
	block := func(name, pool, nodeName, uid, subnet string, index int64) *RailPoolBlock {
		return &RailPoolBlock{TypeMeta: metav1.TypeMeta{Kind: "RailPoolBlock"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{PoolLabel: pool},
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: nodeName, UID: types.UID(uid)}}},
			Spec: BlockSpec{Pool: pool, Node: nodeName, Index: index, Subnet: subnet}}
	}
	tests := []struct {
		name    string
		pools   []*RailPool
		blocks  []*RailPoolBlock
		config  []ipam.PoolConfig
		node    string
		want    []string // pool=block subnet, in order
		kept    bool
		wantErr string
		gone    []string // blocks that must be deleted
	}{
		{name: "first node gets block 0", pools: []*RailPool{pool("decode", "10.1.0.0/24", 26, onlyGPU)},
			node: "n1", want: []string{"decode=10.1.0.0/26"}},
		{name: "next free block when block 0 is held", pools: []*RailPool{pool("decode", "10.1.0.0/24", 26)},
			blocks: []*RailPoolBlock{block("decode-0", "decode", "n2", "uid-n2", "10.1.0.0/26", 0)},
			node:   "n1", want: []string{"decode=10.1.0.64/26"}},
		{name: "the search wraps around", pools: []*RailPool{pool("decode", "10.1.0.0/24", 26)},
			blocks: []*RailPoolBlock{block("decode-3", "decode", "n2", "uid-n2", "10.1.0.192/26", 3)},
			node:   "n4", want: []string{"decode=10.1.0.0/26"}},
		{name: "a free start block is taken", pools: []*RailPool{pool("decode", "10.1.0.0/24", 26)},
			node: "n4", want: []string{"decode=10.1.0.192/26"}},
		{name: "restart keeps the held block", pools: []*RailPool{pool("decode", "10.1.0.0/24", 26)},
			blocks: []*RailPoolBlock{block("decode-0", "decode", "n2", "uid-n2", "10.1.0.0/26", 0),
				block("decode-2", "decode", "n1", "uid-n1", "10.1.0.128/26", 2)},
			node: "n1", want: []string{"decode=10.1.0.128/26"}, kept: true},
		{name: "a block of an earlier node of the same name is freed and a new one claimed",
			pools:  []*RailPool{pool("decode", "10.1.0.0/24", 26)},
			blocks: []*RailPoolBlock{block("decode-3", "decode", "n1", "uid-old", "10.1.0.192/26", 3)},
			node:   "n1", want: []string{"decode=10.1.0.0/26"}, gone: []string{"decode-3"}},
		{name: "a second block of the node is freed", pools: []*RailPool{pool("decode", "10.1.0.0/24", 26)},
			blocks: []*RailPoolBlock{block("decode-1", "decode", "n1", "uid-n1", "10.1.0.64/26", 1),
				block("decode-2", "decode", "n1", "uid-n1", "10.1.0.128/26", 2)},
			node: "n1", want: []string{"decode=10.1.0.64/26"}, kept: true, gone: []string{"decode-2"}},
		{name: "selector leaves a CPU node out", pools: []*RailPool{pool("decode", "10.1.0.0/24", 26, onlyGPU)},
			node: "cpu1"},
		{name: "pools sorted by name, IPv6 too", pools: []*RailPool{pool("z6", "fd00:1::/48", 64), pool("a4", "10.2.0.0/16", 24)},
			node: "n1", want: []string{"a4=10.2.192.0/24", "z6=fd00:1:0:d4c0::/64"}}, // n1's start blocks: 192 of 256, 0xd4c0 of 65536
		{name: "name clash with a config pool", pools: []*RailPool{pool("decode", "10.1.0.0/24", 26)},
			config: []ipam.PoolConfig{{Name: "prefill", Subnet: "10.9.0.0/24"}, {Name: "decode", Subnet: "10.8.0.0/24"}},
			node:   "n1", wantErr: `railpool "decode": raild's config has a pool of the same name (pools[1])`},
		{name: "exhausted pool", pools: []*RailPool{pool("tiny", "10.1.0.0/25", 26)},
			blocks: []*RailPoolBlock{block("tiny-0", "tiny", "n2", "uid-n2", "10.1.0.0/26", 0),
				block("tiny-1", "tiny", "cpu1", "uid-cpu1", "10.1.0.64/26", 1)},
			node: "n1", wantErr: `railpool "tiny" is exhausted: all 2 blocks (/26) of 10.1.0.0/25 are held by other nodes, none left for node "n1"`},
		{name: "gateway outside the subnet", pools: []*RailPool{pool("decode", "10.1.0.0/24", 26, func(s *PoolSpec) { s.Gateway = "10.2.0.1" })},
			node: "n1", wantErr: `railpool "decode": spec.gateway "10.2.0.1": outside subnet 10.1.0.0/24`},
		{name: "block larger than the subnet", pools: []*RailPool{pool("decode", "10.1.0.0/24", 20)},
			node: "n1", wantErr: `railpool "decode": spec.blockSize 20: want a prefix length from 24`},
		{name: "bad maxDistance", pools: []*RailPool{pool("decode", "10.1.0.0/24", 26, func(s *PoolSpec) { s.MaxDistance = "FAR" })},
			node: "n1", wantErr: `railpool "decode": spec.maxDistance "FAR": use PIX`},
		{name: "bad VF settings", pools: []*RailPool{pool("decode", "10.1.0.0/24", 26, func(s *PoolSpec) { v := 5000; s.VLAN = &v })},
			node: "n1", wantErr: `railpool "decode": spec.vlan 5000 is out of range: use 0 (none) to 4094`},
		{name: "bad selector", pools: []*RailPool{pool("decode", "10.1.0.0/24", 26, func(s *PoolSpec) {
			s.NodeSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: "Near"}}}
		})}, node: "n1", wantErr: `railpool "decode": spec.nodeSelector`},
		{name: "block size changed after claims", pools: []*RailPool{pool("decode", "10.1.0.0/24", 25)},
			blocks: []*RailPoolBlock{block("decode-1", "decode", "n1", "uid-n1", "10.1.0.64/26", 1)},
			node:   "n1", wantErr: `no longer gives: the pool's subnet or block size changed`},
		{name: "unknown node", pools: []*RailPool{pool("decode", "10.1.0.0/24", 26)},
			node: "n9", wantErr: `railpools: get node "n9"`},
		{name: "empty node name", node: "", wantErr: "this node's name is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCluster(t, nodes, tt.pools...)
			for _, b := range tt.blocks {
				c.create(t, BlockResource, b)
			}
			res, err := c.claimer(tt.node).NodePools(context.Background(), tt.config)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for i, cl := range res.Claims {
				got = append(got, cl.Pool+"="+cl.Subnet.String())
				if cl.Kept != tt.kept {
					t.Errorf("claim %s kept = %v, want %v", cl.Block, cl.Kept, tt.kept)
				}
				if pc := res.Pools[i]; pc.Name != cl.Pool || len(pc.Nodes) != 1 || pc.Nodes[0].Node != tt.node || pc.Nodes[0].Subnet != cl.Subnet.String() {
					t.Errorf("pool config %+v does not slice %s to node %s", pc, cl.Subnet, tt.node)
				}
				b, held := c.blocks(t)[cl.Block]
				if !held || b.Spec.Node != tt.node || b.Spec.Subnet != cl.Subnet.String() || !ownedBy(&b, nodeByName(nodes, tt.node)) {
					t.Errorf("block object %s = %+v (held %v), want it held by node %s for %s", cl.Block, b, held, tt.node, cl.Subnet)
				}
			}
			if strings.Join(got, " ") != strings.Join(tt.want, " ") {
				t.Errorf("claims = %v, want %v", got, tt.want)
			}
			for _, name := range tt.gone {
				if _, still := c.blocks(t)[name]; still {
					t.Errorf("block %s is still there, want it deleted", name)
				}
			}
		})
	}
}

func TestUnknownNodeIsUnavailable(t *testing.T) {
	c := newCluster(t, nil, pool("one", "10.1.0.0/24", 24))
	_, err := c.claimer("n1").NodePools(context.Background(), nil)
	var unavailable *UnavailableError
	if !errors.As(err, &unavailable) || !strings.Contains(err.Error(), `get node "n1"`) {
		t.Fatalf("err = %v, want an *UnavailableError naming node n1", err)
	}
}

func TestExhaustedErrorIsTyped(t *testing.T) {
	c := newCluster(t, []*corev1.Node{node("n1", "u1", nil), node("n2", "u2", nil)}, pool("one", "10.1.0.0/24", 24))
	if _, err := c.claimer("n1").NodePools(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	_, err := c.claimer("n2").NodePools(context.Background(), nil)
	var ex *ExhaustedError
	if !errors.As(err, &ex) || ex.Pool != "one" || ex.Node != "n2" || ex.Blocks != 1 {
		t.Fatalf("err = %v, want an *ExhaustedError for pool one, node n2, 1 block", err)
	}
}

// TestClaimedPoolsBuild: the pool configs a claim gives are what ipam
// takes, and hand out exactly the block.
func TestClaimedPoolsBuild(t *testing.T) {
	nodes := []*corev1.Node{node("n1", "u1", nil), node("n2", "u2", nil)}
	c := newCluster(t, nodes, pool("decode", "10.1.0.0/24", 26, func(s *PoolSpec) {
		s.Gateway, s.Exclude = "10.1.0.65", []string{"10.1.0.70/31"}
	}))
	tests := []struct {
		node  string
		size  uint64
		first string
	}{
		{node: "n1", size: 63, first: "10.1.0.1"},  // the pool's network address is not handed out
		{node: "n2", size: 61, first: "10.1.0.64"}, // gateway and two excludes fall in block 1
	}
	for _, tt := range tests {
		res, err := c.claimer(tt.node).NodePools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		pools, err := ipam.NewPools(res.Pools, tt.node)
		if err != nil {
			t.Fatalf("ipam.NewPools(%+v): %v", res.Pools, err)
		}
		p, _ := pools.Get("decode")
		if p.Size() != tt.size || p.Ranges()[0].First.String() != tt.first {
			t.Errorf("node %s: size %d, ranges %v; want size %d starting at %s", tt.node, p.Size(), p.Ranges(), tt.size, tt.first)
		}
	}
}

func nodeByName(nodes []*corev1.Node, name string) *corev1.Node {
	for _, n := range nodes {
		if n.Name == name {
			return n
		}
	}
	return nil
}
