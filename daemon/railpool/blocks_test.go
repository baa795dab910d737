package railpool

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestLayout(t *testing.T) {
	tests := []struct {
		subnet    string
		blockSize int
		index     int64
		want      string
		count     int64
		wantErr   string
	}{
		{subnet: "10.0.0.0/16", blockSize: 24, index: 0, want: "10.0.0.0/24", count: 256},
		{subnet: "10.0.0.0/16", blockSize: 24, index: 255, want: "10.0.255.0/24", count: 256},
		{subnet: "10.0.0.0/16", blockSize: 16, index: 0, want: "10.0.0.0/16", count: 1},
		{subnet: "10.0.0.0/30", blockSize: 32, index: 3, want: "10.0.0.3/32", count: 4},
		{subnet: "fd00::/48", blockSize: 64, index: 0x1234, want: "fd00:0:0:1234::/64", count: 65536},
		{subnet: "fd00::/8", blockSize: 128, index: 1<<62 - 1, want: "fd00::3fff:ffff:ffff:ffff/128", count: 1 << 62},
		{subnet: "10.0.0.0/16", blockSize: 8, wantErr: "spec.blockSize 8: want a prefix length from 16"},
		{subnet: "10.0.0.0/16", blockSize: 33, wantErr: "spec.blockSize 33: want a prefix length from 16 (the subnet's own, one block) to 32"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%d#%d", tt.subnet, tt.blockSize, tt.index), func(t *testing.T) {
			l, err := newLayout(netip.MustParsePrefix(tt.subnet), tt.blockSize, "spec.blockSize")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := l.block(tt.index).String(); got != tt.want || l.count != tt.count {
				t.Errorf("block(%d) = %s of %d blocks, want %s of %d", tt.index, got, l.count, tt.want, tt.count)
			}
		})
	}
}

// TestConcurrentClaimsAreDisjoint: nodes claiming at once through one
// API (the fake's tracker serialises creates as etcd does) get different
// blocks, and the pool's last block goes to exactly one of them.
func TestConcurrentClaimsAreDisjoint(t *testing.T) {
	const claimers = 16
	var nodes []*corev1.Node
	for i := range claimers {
		nodes = append(nodes, node(fmt.Sprintf("n%02d", i), fmt.Sprintf("u%02d", i), nil))
	}
	c := newCluster(t, nodes, pool("p", "10.0.0.0/24", 28)) // exactly 16 blocks
	got := make([]Claim, claimers)
	errs := make([]error, claimers)
	var wg sync.WaitGroup
	for i := range claimers {
		wg.Go(func() {
			var res Result
			res, errs[i] = c.claimer(nodes[i].Name).NodePools(context.Background(), nil)
			if len(res.Claims) == 1 {
				got[i] = res.Claims[0]
			}
		})
	}
	wg.Wait()
	seen := map[string]string{}
	for i, cl := range got {
		if errs[i] != nil {
			t.Fatalf("node %s: %v", nodes[i].Name, errs[i])
		}
		if other, dup := seen[cl.Subnet.String()]; dup {
			t.Errorf("block %s given to %s and %s", cl.Subnet, other, nodes[i].Name)
		}
		seen[cl.Subnet.String()] = nodes[i].Name
	}
	if len(c.blocks(t)) != claimers {
		t.Errorf("%d block objects, want %d", len(c.blocks(t)), claimers)
	}
}
