package ipam

import (
	"encoding/binary"
	"math"
	"math/bits"
	"net/netip"
	"slices"
)

// AddrRange is an inclusive range of addresses of one family.
type AddrRange struct {
	First netip.Addr `json:"first"`
	Last  netip.Addr `json:"last"`
}

// Contains reports whether a lies in the range.
func (r AddrRange) Contains(a netip.Addr) bool {
	return r.First.Compare(a) <= 0 && a.Compare(r.Last) <= 0
}

// Size is the number of addresses in the range, saturated at MaxUint64.
func (r AddrRange) Size() uint64 {
	return rangeSize(r.First, r.Last)
}

func (r AddrRange) String() string {
	return r.First.String() + "-" + r.Last.String()
}

// prefixRange returns the first and last address of p.
func prefixRange(p netip.Prefix) AddrRange {
	p = p.Masked()
	first := p.Addr()
	b := first.AsSlice()
	for i := range b {
		covered := min(max(p.Bits()-8*i, 0), 8)
		b[i] |= byte(0xff >> covered)
	}
	last, _ := netip.AddrFromSlice(b)
	return AddrRange{First: first, Last: last}
}

func addrU128(a netip.Addr) (hi, lo uint64) {
	b := a.As16()
	return binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:])
}

// rangeSize counts first..last inclusive, saturating at MaxUint64 (a /64
// and anything wider).
func rangeSize(first, last netip.Addr) uint64 {
	fh, fl := addrU128(first)
	lh, ll := addrU128(last)
	lo, borrow := bits.Sub64(ll, fl, 0)
	hi, _ := bits.Sub64(lh, fh, borrow)
	if hi != 0 || lo == math.MaxUint64 {
		return math.MaxUint64
	}
	return lo + 1
}

func satAdd(a, b uint64) uint64 {
	sum, carry := bits.Add64(a, b, 0)
	if carry != 0 {
		return math.MaxUint64
	}
	return sum
}

func satSub(a, b uint64) uint64 {
	if b > a {
		return 0
	}
	return a - b
}

func sortRanges(rs []AddrRange) {
	slices.SortFunc(rs, func(a, b AddrRange) int { return a.First.Compare(b.First) })
}

func totalSize(spans []AddrRange) uint64 {
	var n uint64
	for _, s := range spans {
		n = satAdd(n, s.Size())
	}
	return n
}
