package ipam

import (
	"math"
	"net/netip"
	"strings"
	"testing"
)

func TestPrefixRangeAndSize(t *testing.T) {
	tests := []struct {
		prefix      string
		first, last string
		size        uint64
	}{
		{"10.0.0.0/24", "10.0.0.0", "10.0.0.255", 256},
		{"10.0.0.77/26", "10.0.0.64", "10.0.0.127", 64},
		{"10.0.0.1/32", "10.0.0.1", "10.0.0.1", 1},
		{"0.0.0.0/0", "0.0.0.0", "255.255.255.255", 1 << 32},
		{"fd00::/120", "fd00::", "fd00::ff", 256},
		{"fd00:1:2:3::/64", "fd00:1:2:3::", "fd00:1:2:3:ffff:ffff:ffff:ffff", math.MaxUint64}, // 2^64 saturates
		{"fd00::/65", "fd00::", "fd00::7fff:ffff:ffff:ffff", 1 << 63},
		{"::/0", "::", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", math.MaxUint64},
	}
	for _, tt := range tests {
		t.Run(tt.prefix, func(t *testing.T) {
			r := prefixRange(netip.MustParsePrefix(tt.prefix))
			if r.First.String() != tt.first || r.Last.String() != tt.last || r.Size() != tt.size {
				t.Errorf("prefixRange = %s size %d, want %s-%s size %d", r, r.Size(), tt.first, tt.last, tt.size)
			}
		})
	}
}

func TestSubtractAll(t *testing.T) {
	rng := func(s string) AddrRange {
		first, last, _ := strings.Cut(s, "-")
		return AddrRange{First: netip.MustParseAddr(first), Last: netip.MustParseAddr(last)}
	}
	tests := []struct {
		name  string
		spans []string
		cuts  []string // in any order, may overlap
		want  string
	}{
		{"middle splits", []string{"10.0.0.1-10.0.0.9"}, []string{"10.0.0.4-10.0.0.5"}, "10.0.0.1-10.0.0.3,10.0.0.6-10.0.0.9"},
		{"head", []string{"10.0.0.1-10.0.0.9"}, []string{"10.0.0.0-10.0.0.2"}, "10.0.0.3-10.0.0.9"},
		{"tail", []string{"10.0.0.1-10.0.0.9"}, []string{"10.0.0.9-10.0.0.20"}, "10.0.0.1-10.0.0.8"},
		{"whole span and part of next", []string{"10.0.0.1-10.0.0.3", "10.0.0.5-10.0.0.9"}, []string{"10.0.0.0-10.0.0.6"}, "10.0.0.7-10.0.0.9"},
		{"disjoint", []string{"10.0.0.1-10.0.0.3"}, []string{"10.0.0.4-10.0.0.4"}, "10.0.0.1-10.0.0.3"},
		{"no cuts", []string{"10.0.0.1-10.0.0.3"}, nil, "10.0.0.1-10.0.0.3"},
		{"everything", []string{"10.0.0.1-10.0.0.3", "10.0.0.7-10.0.0.8"}, []string{"10.0.0.0-10.0.0.255"}, ""},
		{"unsorted single addresses", []string{"10.0.0.1-10.0.0.9"}, []string{"10.0.0.8-10.0.0.8", "10.0.0.2-10.0.0.2", "10.0.0.5-10.0.0.5"},
			"10.0.0.1-10.0.0.1,10.0.0.3-10.0.0.4,10.0.0.6-10.0.0.7,10.0.0.9-10.0.0.9"},
		{"overlapping and touching cuts", []string{"10.0.0.1-10.0.0.20"}, []string{"10.0.0.6-10.0.0.9", "10.0.0.3-10.0.0.7", "10.0.0.10-10.0.0.10"},
			"10.0.0.1-10.0.0.2,10.0.0.11-10.0.0.20"},
		{"one cut across spans", []string{"10.0.0.1-10.0.0.3", "10.0.0.5-10.0.0.6", "10.0.0.8-10.0.0.9"}, []string{"10.0.0.2-10.0.0.8"},
			"10.0.0.1-10.0.0.1,10.0.0.9-10.0.0.9"},
		{"cuts at the ends of the address space", []string{"0.0.0.0-255.255.255.255"}, []string{"255.255.255.255-255.255.255.255", "0.0.0.0-0.0.0.0"},
			"0.0.0.1-255.255.255.254"},
		{"ipv6 wide cut", []string{"fd00::1-fd00::ffff:ffff:ffff:ffff"}, []string{"fd00::1:0:0:0-fd00::ffff:ffff:ffff:fffe"}, "fd00::1-fd00::ffff:ffff:ffff,fd00::ffff:ffff:ffff:ffff-fd00::ffff:ffff:ffff:ffff"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var spans []AddrRange
			for _, s := range tt.spans {
				spans = append(spans, rng(s))
			}
			var cuts []AddrRange
			for _, s := range tt.cuts {
				cuts = append(cuts, rng(s))
			}
			var got []string
			for _, r := range subtractAll(spans, cuts) {
				got = append(got, r.String())
			}
			if strings.Join(got, ",") != tt.want {
				t.Errorf("subtractAll = %s, want %s", strings.Join(got, ","), tt.want)
			}
		})
	}
}
