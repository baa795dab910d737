package ipam

import (
	"strings"
	"testing"
)

// TestCheckPool: one pool is checked as NewPools checks it, with its
// fields named under the caller's path.
func TestCheckPool(t *testing.T) {
	tests := []struct {
		name    string
		pool    PoolConfig
		wantErr string
	}{
		{name: "valid", pool: PoolConfig{Name: "decode", Subnet: "10.1.0.0/24", Gateway: "10.1.0.1"}},
		{name: "gateway outside", pool: PoolConfig{Name: "decode", Subnet: "10.1.0.0/24", Gateway: "10.2.0.1"},
			wantErr: `railpool "decode": spec.gateway "10.2.0.1": outside subnet 10.1.0.0/24`},
		{name: "bad subnet", pool: PoolConfig{Name: "decode", Subnet: "10.1.0.0/33"},
			wantErr: `railpool "decode": spec.subnet "10.1.0.0/33": invalid CIDR`},
		{name: "node slice outside", pool: PoolConfig{Name: "decode", Subnet: "10.1.0.0/24", Nodes: []NodeSlice{{Node: "n1", Subnet: "10.3.0.0/26"}}},
			wantErr: `railpool "decode": spec.nodes[0].subnet "10.3.0.0/26": outside pool subnet`},
		{name: "nothing left on the node", pool: PoolConfig{Name: "decode", Subnet: "10.1.0.0/24", Exclude: []string{"10.1.0.0/26"}, Nodes: []NodeSlice{{Node: "n1", Subnet: "10.1.0.0/26"}}},
			wantErr: `railpool "decode": spec: no address left to hand out on node "n1"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckPool(tt.pool, `railpool "decode": spec`, "n1")
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("CheckPool = %v, want %q", err, tt.wantErr)
			}
		})
	}
}
