package ipam

import (
	"net/netip"
	"strings"
	"testing"
)

// FuzzPoolConfig feeds random subnets, ranges, excludes, gateways, node
// slices and a second pool to NewPools. It must never panic, and a pool it
// accepts must hand out only addresses inside its ranges (or node slice),
// outside its excludes, never its gateway, network or broadcast address,
// never a special (loopback, multicast, ...) address, and never an address
// of the other pool.
func FuzzPoolConfig(f *testing.F) {
	f.Add("10.0.0.0/24", "10.0.0.10", "10.0.0.20", "10.0.0.15,10.0.0.16/30", "10.0.0.1", "", "10.1.0.0/24")
	f.Add("fd00::/120", "", "", "fd00::80/121", "fd00::1", "", "fd00:1::/64")
	f.Add("10.0.0.0/24", "", "", "", "", "10.0.0.0/26", "10.0.0.128/25")
	f.Add("::/0", "", "", "", "", "", "")
	f.Add("10.0.0.0/31", "10.0.0.0", "10.0.0.1", "10.0.0.1", "", "", "10.0.0.0/24")
	f.Add("10.0.0.0/30", "", "", "10.0.0.0/30,10.0.0.2", "10.0.0.2", "", "")
	f.Fuzz(func(t *testing.T, subnet, start, end, excludes, gateway, nodeSubnet, other string) {
		c := PoolConfig{Name: "p", Subnet: subnet, Gateway: gateway}
		if start != "" || end != "" {
			c.Ranges = []RangeConfig{{Start: start, End: end}}
		}
		if excludes != "" {
			c.Exclude = strings.Split(excludes, ",")
		}
		if nodeSubnet != "" {
			c.Nodes = []NodeSlice{{Node: "n1", Subnet: nodeSubnet}}
		}
		cfg := []PoolConfig{c}
		if other != "" {
			cfg = append(cfg, PoolConfig{Name: "q", Subnet: other})
		}
		pools, err := NewPools(cfg, "n1")
		if err != nil {
			if pools != nil {
				t.Fatalf("NewPools returned pools with error %v", err)
			}
			return
		}
		p, _ := pools.Get("p")
		checkSpans(t, p)
		want := expectedRule(t, p)
		for _, s := range p.Ranges() {
			for _, a := range []netip.Addr{s.First, s.Last} {
				if !want(a) {
					t.Fatalf("pool %+v hands out %s", c, a)
				}
			}
		}
		if p.Prefix.Addr().BitLen()-p.Prefix.Bits() <= 12 { // small: check every address
			for a, last := p.Prefix.Addr(), prefixRange(p.Prefix).Last; ; a = a.Next() {
				if p.Contains(a) != want(a) {
					t.Fatalf("pool %+v: Contains(%s) = %v, want %v", c, a, p.Contains(a), want(a))
				}
				if a == last {
					break
				}
			}
		}
		if q, ok := pools.Get("q"); ok {
			for _, s := range q.Ranges() {
				if p.Contains(s.First) || p.Contains(s.Last) {
					t.Fatalf("pools %+v and %q both hand out %s", c, other, s)
				}
			}
		}
	})
}

// checkSpans checks the pool's spans are sorted, disjoint, not empty and
// add up to its size.
func checkSpans(t *testing.T, p *Pool) {
	t.Helper()
	spans := p.Ranges()
	var size uint64
	for i, s := range spans {
		if s.Last.Less(s.First) || (i > 0 && !spans[i-1].Last.Less(s.First)) {
			t.Fatalf("spans not sorted and disjoint: %v", spans)
		}
		size = satAdd(size, s.Size())
	}
	if size != p.Size() {
		t.Fatalf("Size = %d, spans add up to %d", p.Size(), size)
	}
}

// expectedRule says, from the config alone, whether the pool may hand out
// an address: the naive definition the optimised code must agree with.
func expectedRule(t *testing.T, p *Pool) func(netip.Addr) bool {
	t.Helper()
	var allowed, excluded []AddrRange
	switch {
	case len(p.Config.Nodes) > 0:
		allowed = []AddrRange{prefixRange(netip.MustParsePrefix(p.Config.Nodes[0].Subnet))}
	case len(p.Config.Ranges) > 0:
		r := p.Config.Ranges[0]
		allowed = []AddrRange{{First: netip.MustParseAddr(r.Start), Last: netip.MustParseAddr(r.End)}}
	default:
		allowed = []AddrRange{prefixRange(p.Prefix)}
	}
	for _, x := range p.Config.Exclude {
		r, err := parseAddrOrPrefix(x)
		if err != nil {
			t.Fatalf("accepted exclude %q does not parse: %v", x, err)
		}
		excluded = append(excluded, r)
	}
	in := func(rs []AddrRange, a netip.Addr) bool {
		for _, r := range rs {
			if r.Contains(a) {
				return true
			}
		}
		return false
	}
	return func(a netip.Addr) bool {
		for _, b := range specialBlocks() {
			if b.prefix.Contains(a) {
				return false
			}
		}
		return p.Prefix.Contains(a) && in(allowed, a) && !in(excluded, a) && a != p.Gateway && !reserved(p.Prefix, a)
	}
}
