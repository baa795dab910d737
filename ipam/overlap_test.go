package ipam

import (
	"net/netip"
	"strings"
	"testing"
)

// TestPoolsOverlap: pools that would hand out the same address on this
// node are refused with both names and the shared range; pools that only
// share a subnet (disjoint ranges, one gateway) are fine.
func TestPoolsOverlap(t *testing.T) {
	half := func(name, start, end string) PoolConfig {
		return PoolConfig{Name: name, Subnet: "10.0.0.0/24", Gateway: "10.0.0.1",
			Ranges: []RangeConfig{{Start: start, End: end}}}
	}
	tests := []struct {
		name string
		cfg  []PoolConfig
		node string
		want []string // "" entries: valid
	}{
		{name: "same subnet twice", cfg: []PoolConfig{{Name: "a", Subnet: "10.0.0.0/24"}, {Name: "b", Subnet: "10.0.0.0/24"}},
			want: []string{`pools[0] "a" and pools[1] "b": both hand out 10.0.0.1-10.0.0.254 on this node`}},
		{name: "nested subnets", cfg: []PoolConfig{{Name: "wide", Subnet: "10.0.0.0/16"}, {Name: "narrow", Subnet: "10.0.3.0/29"}},
			want: []string{`pools[0] "wide" and pools[1] "narrow": both hand out 10.0.3.1-10.0.3.6`}},
		{name: "ranges overlap by one address", cfg: []PoolConfig{half("a", "10.0.0.2", "10.0.0.100"), half("b", "10.0.0.100", "10.0.0.200")},
			want: []string{`pools[0] "a" and pools[1] "b": both hand out 10.0.0.100-10.0.0.100`}},
		{name: "an exclude removes the overlap", cfg: []PoolConfig{
			{Name: "a", Subnet: "10.0.0.0/24", Exclude: []string{"10.0.0.128/25"}},
			{Name: "b", Subnet: "10.0.0.128/25"}}},
		{name: "disjoint halves share the gateway", cfg: []PoolConfig{half("a", "10.0.0.2", "10.0.0.127"), half("b", "10.0.0.128", "10.0.0.254")}},
		{name: "one pool hands out the other's gateway", cfg: []PoolConfig{
			{Name: "a", Subnet: "10.0.0.0/25"},
			{Name: "b", Subnet: "10.0.0.0/24", Gateway: "10.0.0.5", Ranges: []RangeConfig{{Start: "10.0.0.200", End: "10.0.0.250"}}}},
			want: []string{`pools[0] "a": hands out 10.0.0.5, the gateway of pools[1] "b"`}},
		{name: "families never overlap", cfg: []PoolConfig{{Name: "v4", Subnet: "10.0.0.0/24"}, {Name: "v6", Subnet: "fd00::/64"}}},
		{name: "other nodes' slices may overlap another pool", node: "n1", cfg: []PoolConfig{
			{Name: "a", Subnet: "10.0.0.0/24", Nodes: []NodeSlice{{Node: "n1", Subnet: "10.0.0.0/26"}, {Node: "n2", Subnet: "10.0.0.64/26"}}},
			{Name: "b", Subnet: "10.0.0.0/24", Nodes: []NodeSlice{{Node: "n1", Subnet: "10.0.0.128/26"}, {Node: "n3", Subnet: "10.0.0.0/26"}}}}},
		{name: "this node's slices overlap", node: "n1", cfg: []PoolConfig{
			{Name: "a", Subnet: "10.0.0.0/24", Nodes: []NodeSlice{{Node: "n1", Subnet: "10.0.0.0/26"}}},
			{Name: "b", Subnet: "10.0.0.0/24", Nodes: []NodeSlice{{Node: "n1", Ranges: []RangeConfig{{Start: "10.0.0.60", End: "10.0.0.70"}}}}}},
			want: []string{`pools[0] "a" and pools[1] "b": both hand out 10.0.0.60-10.0.0.63`}},
		{name: "three pools, every pair named", cfg: []PoolConfig{
			{Name: "a", Subnet: "10.0.0.0/24"}, {Name: "b", Subnet: "10.0.0.0/25"}, {Name: "c", Subnet: "10.0.0.64/26"}},
			want: []string{`pools[0] "a" and pools[1] "b"`, `pools[0] "a" and pools[2] "c"`, `pools[1] "b" and pools[2] "c"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			node := tt.node
			if node == "" {
				node = "n1"
			}
			pools, err := NewPools(tt.cfg, node)
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("NewPools: %v", err)
				}
				return
			}
			if err == nil || pools != nil {
				t.Fatalf("NewPools = %v, %v; want an error", pools.Names(), err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\n does not contain %q", err, w)
				}
			}
		})
	}
}

// TestFindClashesBounded: a config where everything overlaps is reported
// briefly, not once per pair.
func TestFindClashesBounded(t *testing.T) {
	var all []ownedRange
	r := AddrRange{First: netip.MustParseAddr("10.0.0.1"), Last: netip.MustParseAddr("10.0.0.9")}
	for i := range 5000 {
		all = append(all, ownedRange{r: r, owner: i})
	}
	if got := findClashes(all); len(got) != maxClashes {
		t.Fatalf("findClashes of 5000 identical ranges = %d clashes, want %d", len(got), maxClashes)
	}
}
