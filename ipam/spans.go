package ipam

import (
	"net/netip"
	"slices"
)

// mergeRanges sorts rs and joins ranges that overlap or touch, so the result
// is sorted and disjoint with a gap between neighbours. It reorders rs.
func mergeRanges(rs []AddrRange) []AddrRange {
	if len(rs) == 0 {
		return nil
	}
	sortRanges(rs)
	out := make([]AddrRange, 1, len(rs))
	out[0] = rs[0]
	for _, r := range rs[1:] {
		last := &out[len(out)-1]
		if !touches(*last, r) {
			out = append(out, r)
			continue
		}
		if last.Last.Less(r.Last) {
			last.Last = r.Last
		}
	}
	return out
}

// touches reports whether b (which starts at or after a) overlaps a or
// starts right after it.
func touches(a, b AddrRange) bool {
	return b.First.Compare(a.Last) <= 0 || b.First == a.Last.Next()
}

// subtractAll removes every cut from spans (sorted, disjoint) in one sweep:
// O((spans+cuts) log cuts) instead of one pass over spans per cut. cuts
// may come in any order and overlap; they are not modified.
func subtractAll(spans, cuts []AddrRange) []AddrRange {
	merged := mergeRanges(slices.Clone(cuts))
	out := make([]AddrRange, 0, len(spans)+len(merged))
	c := 0
	for _, s := range spans {
		for c < len(merged) && merged[c].Last.Less(s.First) {
			c++ // cuts wholly before this span are done
		}
		out = appendUncut(out, s, merged[c:])
	}
	return out
}

// appendUncut appends what is left of s after the cuts (sorted, disjoint,
// none wholly before s) to out.
func appendUncut(out []AddrRange, s AddrRange, cuts []AddrRange) []AddrRange {
	next := s.First
	for _, cut := range cuts {
		if s.Last.Less(cut.First) {
			break
		}
		if next.Less(cut.First) {
			out = append(out, AddrRange{First: next, Last: cut.First.Prev()})
		}
		if !cut.Last.Less(s.Last) {
			return out // the cut reaches the end of s
		}
		if next.Less(cut.Last.Next()) {
			next = cut.Last.Next()
		}
	}
	return append(out, AddrRange{First: next, Last: s.Last})
}

// single is the range of one address.
func single(a netip.Addr) AddrRange { return AddrRange{First: a, Last: a} }
