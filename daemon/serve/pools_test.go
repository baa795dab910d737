package serve

import (
	"context"
	"log/slog"
	"net"
	"strings"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/railcni/rail/daemon/config"
	"github.com/railcni/rail/daemon/kubeclient"
	"github.com/railcni/rail/ipam"
)

// TestNodePoolsWithoutAPI: without API clients raild's pools are the
// config's, exactly as before RailPools, and their errors read as before.
func TestNodePoolsWithoutAPI(t *testing.T) {
	tests := []struct {
		name      string
		pools     []ipam.PoolConfig
		wantNames string
		wantErr   string
	}{
		{name: "config pools", pools: []ipam.PoolConfig{{Name: "a", Subnet: "10.1.0.0/24"}, {Name: "b", Subnet: "10.2.0.0/24"}}, wantNames: "a,b"},
		{name: "no pools", wantNames: ""},
		{name: "bad config pool", pools: []ipam.PoolConfig{{Name: "a", Subnet: "10.1.0.0/33"}},
			wantErr: `config pools: pools[0].subnet "10.1.0.0/33": invalid CIDR`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := &config.Config{NodeName: "n1", Pools: tt.pools}
			pools, follow, err := nodePools(context.Background(), cfg, nil, slog.New(slog.DiscardHandler))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			follow(context.Background()) // returns at once: nothing to follow
			if got := strings.Join(pools.Names(), ","); got != tt.wantNames {
				t.Errorf("pools = %s, want %s", got, tt.wantNames)
			}
		})
	}
}

// TestNodePoolsAPIAway: an API server that does not answer at start does
// not stop raild: it serves the config's pools.
func TestNodePoolsAPIAway(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	host := "https://" + l.Addr().String()
	l.Close() // nothing listens there any more: connections are refused
	clients, err := kubeclient.New(&rest.Config{Host: host}, "raild-test")
	if err != nil {
		t.Fatal(err)
	}
	cfg := &config.Config{NodeName: "n1", Pools: []ipam.PoolConfig{{Name: "a", Subnet: "10.1.0.0/24"}}}
	pools, _, err := nodePools(context.Background(), cfg, clients, slog.New(slog.DiscardHandler))
	if err != nil || strings.Join(pools.Names(), ",") != "a" {
		t.Fatalf("nodePools = %v, %v; want the config's pool a and no error", pools.Names(), err)
	}
}
