package ipam

import (
	"math"
	"net/netip"
	"strings"
	"testing"
)

func intp(i int) *int { return &i }

func TestNewPoolsGood(t *testing.T) {
	tests := []struct {
		name     string
		cfg      PoolConfig
		node     string
		size     uint64
		ranges   string // AddrRange strings joined by ","
		noSlice  bool
		wantPref string
	}{
		{name: "name and subnet only", cfg: PoolConfig{Name: "rail0", Subnet: "10.0.0.0/24"},
			size: 254, ranges: "10.0.0.1-10.0.0.254"},
		{name: "gateway removed", cfg: PoolConfig{Name: "a", Subnet: "10.0.0.0/24", Gateway: "10.0.0.1"},
			size: 253, ranges: "10.0.0.2-10.0.0.254"},
		{name: "gateway in the middle", cfg: PoolConfig{Name: "a", Subnet: "10.0.0.0/29", Gateway: "10.0.0.3"},
			size: 5, ranges: "10.0.0.1-10.0.0.2,10.0.0.4-10.0.0.6"},
		{name: "host bits masked", cfg: PoolConfig{Name: "a", Subnet: "10.0.0.7/24"},
			size: 254, ranges: "10.0.0.1-10.0.0.254", wantPref: "10.0.0.0/24"},
		{name: "ipv6 /64 not materialised", cfg: PoolConfig{Name: "v6", Subnet: "fd00:10::/64", Gateway: "fd00:10::1"},
			size: math.MaxUint64 - 1, ranges: "fd00:10::2-fd00:10::ffff:ffff:ffff:ffff"},
		{name: "ipv6 /48 saturates", cfg: PoolConfig{Name: "v6", Subnet: "fd00:10::/48"},
			size: math.MaxUint64, ranges: "fd00:10::1-fd00:10:0:ffff:ffff:ffff:ffff:ffff"},
		{name: "ipv6 /120 keeps last address", cfg: PoolConfig{Name: "v6", Subnet: "fd00::/120"},
			size: 255, ranges: "fd00::1-fd00::ff"},
		{name: "ipv4 /31 has no network or broadcast", cfg: PoolConfig{Name: "p2p", Subnet: "10.0.0.0/31"},
			size: 2, ranges: "10.0.0.0-10.0.0.1"},
		{name: "ipv4 /32", cfg: PoolConfig{Name: "one", Subnet: "10.0.0.9/32"},
			size: 1, ranges: "10.0.0.9-10.0.0.9"},
		{name: "ranges and excludes", cfg: PoolConfig{Name: "a", Subnet: "10.0.0.0/24",
			Ranges:  []RangeConfig{{Start: "10.0.0.10", End: "10.0.0.20"}, {Start: "10.0.0.0", End: "10.0.0.2"}},
			Exclude: []string{"10.0.0.15", "10.0.0.16/30"}},
			size: 8, ranges: "10.0.0.1-10.0.0.2,10.0.0.10-10.0.0.14,10.0.0.20-10.0.0.20"},
		{name: "node slice by subnet", node: "n1", cfg: PoolConfig{Name: "a", Subnet: "10.0.0.0/24", Nodes: []NodeSlice{
			{Node: "n1", Subnet: "10.0.0.0/26"}, {Node: "n2", Ranges: []RangeConfig{{Start: "10.0.0.64", End: "10.0.0.127"}}}}},
			size: 63, ranges: "10.0.0.1-10.0.0.63"},
		{name: "node slice by ranges", node: "n2", cfg: PoolConfig{Name: "a", Subnet: "10.0.0.0/24", Nodes: []NodeSlice{
			{Node: "n1", Subnet: "10.0.0.0/26"}, {Node: "n2", Ranges: []RangeConfig{{Start: "10.0.0.64", End: "10.0.0.127"}}}}},
			size: 64, ranges: "10.0.0.64-10.0.0.127"},
		{name: "node not listed", node: "n3", cfg: PoolConfig{Name: "a", Subnet: "10.0.0.0/24", Nodes: []NodeSlice{
			{Node: "n1", Subnet: "10.0.0.0/26"}}},
			size: 0, ranges: "", noSlice: true},
		{name: "bindings routes mtu", cfg: PoolConfig{Name: "decode.v6_1", Subnet: "fd00:1::/112", Rail: intp(0),
			NICs: []string{"mlx5_0", "0000:3b:00.0"}, MTU: 9000,
			Routes: []RouteConfig{{Dst: "fd00:2::/64", GW: "fd00:1::1"}, {Dst: "fd00:3::/64"}}},
			size: 65535, ranges: "fd00:1::1-fd00:1::ffff"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pools, err := NewPools([]PoolConfig{tt.cfg}, tt.node)
			if err != nil {
				t.Fatalf("NewPools: %v", err)
			}
			p, ok := pools.Get(tt.cfg.Name)
			if !ok {
				t.Fatalf("Get(%q): missing; have %v", tt.cfg.Name, pools.Names())
			}
			if p.Size() != tt.size {
				t.Errorf("Size = %d, want %d", p.Size(), tt.size)
			}
			var got []string
			for _, r := range p.Ranges() {
				got = append(got, r.String())
			}
			if strings.Join(got, ",") != tt.ranges {
				t.Errorf("Ranges = %s, want %s", strings.Join(got, ","), tt.ranges)
			}
			if p.HasNodeSlice() == tt.noSlice {
				t.Errorf("HasNodeSlice = %v, want %v", p.HasNodeSlice(), !tt.noSlice)
			}
			if tt.wantPref != "" && p.Prefix.String() != tt.wantPref {
				t.Errorf("Prefix = %s, want %s", p.Prefix, tt.wantPref)
			}
			if len(p.Routes) != len(tt.cfg.Routes) || p.MTU != tt.cfg.MTU {
				t.Errorf("Routes = %v MTU = %d, want %d routes and MTU %d", p.Routes, p.MTU, len(tt.cfg.Routes), tt.cfg.MTU)
			}
		})
	}
}

func TestNewPoolsBad(t *testing.T) {
	v4 := func(mod func(*PoolConfig)) PoolConfig {
		c := PoolConfig{Name: "a", Subnet: "10.0.0.0/24"}
		mod(&c)
		return c
	}
	tests := []struct {
		name string
		cfg  []PoolConfig
		want []string // each must appear in the error
	}{
		{"subnet too long", []PoolConfig{{Name: "a", Subnet: "10.0.0.0/24"}, {Name: "b", Subnet: "10.0.0.0/33"}},
			[]string{`pools[1].subnet "10.0.0.0/33": invalid CIDR: want e.g. 10.10.0.0/24 or fd00:10::/64`}},
		{"subnet empty", []PoolConfig{{Name: "a"}}, []string{"pools[0].subnet: empty: want e.g."}},
		{"subnet 4in6", []PoolConfig{{Name: "a", Subnet: "::ffff:10.0.0.0/120"}}, []string{`pools[0].subnet "::ffff:10.0.0.0/120": invalid CIDR`}},
		{"name empty", []PoolConfig{{Subnet: "10.0.0.0/24"}}, []string{"pools[0].name: empty"}},
		{"name bad chars", []PoolConfig{{Name: "Rail 0", Subnet: "10.0.0.0/24"}}, []string{`pools[0].name "Rail 0": invalid: want lowercase`}},
		{"name leading dash", []PoolConfig{{Name: "-a", Subnet: "10.0.0.0/24"}}, []string{`pools[0].name "-a": invalid`}},
		{"name too long", []PoolConfig{{Name: strings.Repeat("a", 64), Subnet: "10.0.0.0/24"}}, []string{"pools[0].name", "at most 63"}},
		{"duplicate names", []PoolConfig{{Name: "a", Subnet: "10.0.0.0/24"}, {Name: "a", Subnet: "10.1.0.0/24"}},
			[]string{`pools[1].name "a": duplicate of pools[0]`}},
		{"range outside subnet", []PoolConfig{v4(func(c *PoolConfig) { c.Ranges = []RangeConfig{{Start: "10.0.0.5", End: "10.0.1.5"}} })},
			[]string{`pools[0].ranges[0].end "10.0.1.5": outside subnet 10.0.0.0/24`}},
		{"range other family", []PoolConfig{v4(func(c *PoolConfig) { c.Ranges = []RangeConfig{{Start: "fd00::1", End: "10.0.0.9"}} })},
			[]string{`pools[0].ranges[0].start "fd00::1": outside subnet`}},
		{"range bad address", []PoolConfig{v4(func(c *PoolConfig) { c.Ranges = []RangeConfig{{Start: "10.0.0", End: "10.0.0.9"}} })},
			[]string{`pools[0].ranges[0].start "10.0.0": invalid address: want e.g. 10.0.0.1`}},
		{"start after end", []PoolConfig{v4(func(c *PoolConfig) { c.Ranges = []RangeConfig{{Start: "10.0.0.50", End: "10.0.0.10"}} })},
			[]string{"pools[0].ranges[0]: start 10.0.0.50 is after end 10.0.0.10: swap them"}},
		{"ranges overlap", []PoolConfig{v4(func(c *PoolConfig) {
			c.Ranges = []RangeConfig{{Start: "10.0.0.10", End: "10.0.0.20"}, {Start: "10.0.0.15", End: "10.0.0.30"}}
		})}, []string{"pools[0].ranges[1] 10.0.0.15-10.0.0.30: overlaps ranges[0] 10.0.0.10-10.0.0.20"}},
		{"gateway outside", []PoolConfig{v4(func(c *PoolConfig) { c.Gateway = "10.1.0.1" })},
			[]string{`pools[0].gateway "10.1.0.1": outside subnet 10.0.0.0/24`}},
		{"gateway network address", []PoolConfig{v4(func(c *PoolConfig) { c.Gateway = "10.0.0.0" })},
			[]string{`pools[0].gateway "10.0.0.0": is the network or broadcast address`}},
		{"gateway broadcast", []PoolConfig{v4(func(c *PoolConfig) { c.Gateway = "10.0.0.255" })},
			[]string{`pools[0].gateway "10.0.0.255": is the network or broadcast address`}},
		{"gateway garbage", []PoolConfig{v4(func(c *PoolConfig) { c.Gateway = "gw" })}, []string{`pools[0].gateway "gw": invalid address`}},
		{"exclude garbage", []PoolConfig{v4(func(c *PoolConfig) { c.Exclude = []string{"10.0.0.300"} })},
			[]string{`pools[0].exclude[0] "10.0.0.300": invalid: want an address`}},
		{"exclude outside", []PoolConfig{v4(func(c *PoolConfig) { c.Exclude = []string{"10.0.0.4", "10.9.0.0/28"} })},
			[]string{`pools[0].exclude[1] "10.9.0.0/28": outside subnet 10.0.0.0/24`}},
		{"exclude wider than subnet", []PoolConfig{v4(func(c *PoolConfig) { c.Exclude = []string{"10.0.0.0/23"} })},
			[]string{`pools[0].exclude[0] "10.0.0.0/23": outside subnet`}},
		{"everything excluded", []PoolConfig{v4(func(c *PoolConfig) { c.Exclude = []string{"10.0.0.0/24"} })},
			[]string{`pools[0]: no address left to hand out`}},
		{"mtu too small", []PoolConfig{v4(func(c *PoolConfig) { c.MTU = 50 })}, []string{"pools[0].mtu 50: out of range: want 68..65535"}},
		{"mtu too big", []PoolConfig{v4(func(c *PoolConfig) { c.MTU = 70000 })}, []string{"pools[0].mtu 70000: out of range"}},
		{"mtu too small for ipv6", []PoolConfig{{Name: "a", Subnet: "fd00::/64", MTU: 1000}}, []string{"pools[0].mtu 1000: out of range: want 1280..65535"}},
		{"rail negative", []PoolConfig{v4(func(c *PoolConfig) { c.Rail = intp(-1) })}, []string{"pools[0].rail -1: negative"}},
		{"nic empty", []PoolConfig{v4(func(c *PoolConfig) { c.NICs = []string{"mlx5_0", " "} })}, []string{"pools[0].nics[1]: empty: want a NIC name"}},
		{"nic duplicate", []PoolConfig{v4(func(c *PoolConfig) { c.NICs = []string{"mlx5_0", "mlx5_0"} })},
			[]string{`pools[0].nics[1] "mlx5_0": duplicate of nics[0]`}},
		{"route dst not a cidr", []PoolConfig{v4(func(c *PoolConfig) { c.Routes = []RouteConfig{{Dst: "10.1.0.0"}} })},
			[]string{`pools[0].routes[0].dst "10.1.0.0": invalid CIDR`}},
		{"route other family", []PoolConfig{v4(func(c *PoolConfig) { c.Routes = []RouteConfig{{Dst: "fd00::/64"}} })},
			[]string{`pools[0].routes[0].dst "fd00::/64": address family differs`}},
		{"route gw bad", []PoolConfig{v4(func(c *PoolConfig) { c.Routes = []RouteConfig{{Dst: "10.1.0.0/16", GW: "fd00::1"}} })},
			[]string{`pools[0].routes[0].gw "fd00::1": invalid`}},
		{"ranges and nodes", []PoolConfig{v4(func(c *PoolConfig) {
			c.Ranges = []RangeConfig{{Start: "10.0.0.1", End: "10.0.0.9"}}
			c.Nodes = []NodeSlice{{Node: "n1", Subnet: "10.0.0.0/26"}}
		})}, []string{"pools[0]: ranges and nodes are both set"}},
		{"node name empty", []PoolConfig{v4(func(c *PoolConfig) { c.Nodes = []NodeSlice{{Subnet: "10.0.0.0/26"}} })},
			[]string{"pools[0].nodes[0].node: empty"}},
		{"node duplicate", []PoolConfig{v4(func(c *PoolConfig) {
			c.Nodes = []NodeSlice{{Node: "n1", Subnet: "10.0.0.0/26"}, {Node: "n1", Subnet: "10.0.0.64/26"}}
		})}, []string{`pools[0].nodes[1].node "n1": duplicate of nodes[0]`}},
		{"node subnet outside", []PoolConfig{v4(func(c *PoolConfig) { c.Nodes = []NodeSlice{{Node: "n1", Subnet: "10.0.1.0/26"}} })},
			[]string{`pools[0].nodes[0].subnet "10.0.1.0/26": outside pool subnet 10.0.0.0/24`}},
		{"node subnet wider", []PoolConfig{v4(func(c *PoolConfig) { c.Nodes = []NodeSlice{{Node: "n1", Subnet: "10.0.0.0/23"}} })},
			[]string{`pools[0].nodes[0].subnet "10.0.0.0/23": outside pool subnet`}},
		{"node subnet and ranges", []PoolConfig{v4(func(c *PoolConfig) {
			c.Nodes = []NodeSlice{{Node: "n1", Subnet: "10.0.0.0/26", Ranges: []RangeConfig{{Start: "10.0.0.1", End: "10.0.0.2"}}}}
		})}, []string{"pools[0].nodes[0]: subnet and ranges are both set"}},
		{"node neither", []PoolConfig{v4(func(c *PoolConfig) { c.Nodes = []NodeSlice{{Node: "n1"}} })},
			[]string{`pools[0].nodes[0]: neither subnet nor ranges is set: give node "n1" a subnet`}},
		{"node range bad", []PoolConfig{v4(func(c *PoolConfig) {
			c.Nodes = []NodeSlice{{Node: "n1", Ranges: []RangeConfig{{Start: "10.0.0.9", End: "10.0.0.1"}}}}
		})}, []string{"pools[0].nodes[0].ranges[0]: start 10.0.0.9 is after end 10.0.0.1"}},
		{"node slices overlap", []PoolConfig{v4(func(c *PoolConfig) {
			c.Nodes = []NodeSlice{{Node: "n1", Subnet: "10.0.0.0/26"}, {Node: "n2", Ranges: []RangeConfig{{Start: "10.0.0.32", End: "10.0.0.63"}}}}
		})}, []string{`pools[0].nodes[1] (node "n2") 10.0.0.32-10.0.0.63: overlaps nodes[0] (node "n1") 10.0.0.0-10.0.0.63`}},
		{"ipv6 everything", []PoolConfig{{Name: "a", Subnet: "::/0"}}, []string{`pools[0].subnet "::/0": overlaps ::/128, the unspecified address`}},
		{"ipv4 everything", []PoolConfig{{Name: "a", Subnet: "0.0.0.0/0"}}, []string{`pools[0].subnet "0.0.0.0/0": overlaps 0.0.0.0/8`}},
		{"ipv6 loopback", []PoolConfig{{Name: "a", Subnet: "::/127"}}, []string{`pools[0].subnet "::/127": overlaps ::/128`}},
		{"ipv6 loopback alone", []PoolConfig{{Name: "a", Subnet: "::1/128"}}, []string{`overlaps ::1/128, loopback`}},
		{"ipv4 loopback", []PoolConfig{{Name: "a", Subnet: "127.0.0.0/24"}}, []string{`pools[0].subnet "127.0.0.0/24": overlaps 127.0.0.0/8, loopback`}},
		{"ipv4 wide subnet covering loopback", []PoolConfig{{Name: "a", Subnet: "64.0.0.0/2"}}, []string{`overlaps 127.0.0.0/8, loopback`}},
		{"ipv4 multicast", []PoolConfig{{Name: "a", Subnet: "239.1.0.0/16"}}, []string{`overlaps 224.0.0.0/4, multicast`}},
		{"ipv4 class e", []PoolConfig{{Name: "a", Subnet: "255.255.255.0/24"}}, []string{`overlaps 240.0.0.0/4, reserved`}},
		{"ipv4 link-local", []PoolConfig{{Name: "a", Subnet: "169.254.10.0/24"}}, []string{`overlaps 169.254.0.0/16, link-local`}},
		{"ipv6 link-local", []PoolConfig{{Name: "a", Subnet: "fe80::/64"}}, []string{`overlaps fe80::/10, link-local`}},
		{"ipv6 multicast", []PoolConfig{{Name: "a", Subnet: "ff02::/16"}}, []string{`overlaps ff00::/8, multicast`}},
		{"errors of several pools joined", []PoolConfig{{Name: "a", Subnet: "10.0.0.0/33"}, {Name: "B", Subnet: "10.1.0.0/24", MTU: 1}},
			[]string{`pools[0].subnet "10.0.0.0/33"`, `pools[1].name "B"`, "pools[1].mtu 1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pools, err := NewPools(tt.cfg, "n1")
			if err == nil {
				t.Fatalf("NewPools = %v, nil; want an error with %q", pools.Names(), tt.want)
			}
			if pools != nil {
				t.Errorf("NewPools returned pools with an error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\n does not contain %q", err, w)
				}
			}
		})
	}
}

func TestPoolsAccessors(t *testing.T) {
	cfg := []PoolConfig{{Name: "b", Subnet: "10.1.0.0/24"}, {Name: "a", Subnet: "10.0.0.0/24", NICs: []string{"mlx5_0"}}}
	pools, err := NewPools(cfg, "n1")
	if err != nil {
		t.Fatal(err)
	}
	cfg[1].NICs[0] = "changed" // the pools keep their own copy
	p, _ := pools.Get("a")
	if got := strings.Join(pools.Names(), ","); got != "b,a" || pools.Node() != "n1" || len(pools.List()) != 2 {
		t.Errorf("Names = %s, Node = %q, List = %d; want b,a, n1, 2", got, pools.Node(), len(pools.List()))
	}
	if p.Config.NICs[0] != "mlx5_0" {
		t.Errorf("pool config aliases the caller's: NICs = %v", p.Config.NICs)
	}
	for addr, want := range map[string]bool{"10.0.0.0": false, "10.0.0.1": true, "10.0.0.254": true, "10.0.0.255": false, "10.1.0.1": false} {
		if got := p.Contains(netip.MustParseAddr(addr)); got != want {
			t.Errorf("Contains(%s) = %v, want %v", addr, got, want)
		}
	}
	var none *Pools
	if _, ok := none.Get("a"); ok || none.Names() != nil || none.List() != nil || none.Node() != "" {
		t.Errorf("nil Pools is not empty")
	}
	empty, err := NewPools(nil, "n1")
	if err != nil || len(empty.Names()) != 0 {
		t.Errorf("NewPools(nil) = %v, %v; want no pools, no error", empty.Names(), err)
	}
}

// TestNewPoolsSlicedNeedsNode: a pool sliced by node cannot pick this
// node's slice without a node name; that is an error naming where the
// name comes from, never a pool of size 0.
func TestNewPoolsSlicedNeedsNode(t *testing.T) {
	sliced := PoolConfig{Name: "a", Subnet: "10.0.0.0/24", Nodes: []NodeSlice{{Node: "n1", Subnet: "10.0.0.0/26"}}}
	tests := []struct {
		name    string
		cfg     PoolConfig
		node    string
		wantErr string
	}{
		{name: "sliced without node name", cfg: sliced, wantErr: "pools[0].nodes: this node's name is empty"},
		{name: "sliced with node name", cfg: sliced, node: "n1"},
		{name: "not sliced without node name", cfg: PoolConfig{Name: "a", Subnet: "10.0.0.0/24"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pools, err := NewPools([]PoolConfig{tt.cfg}, tt.node)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), "--node-name") {
					t.Fatalf("NewPools = %v, %v; want an error with %q naming --node-name", pools.Names(), err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p, _ := pools.Get("a"); p.Size() == 0 {
				t.Errorf("pool size 0 without an error")
			}
		})
	}
}
