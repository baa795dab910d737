package ipam

import (
	"fmt"
	"net/netip"
	"slices"
)

// ownedRange is a range with the index of what owns it: a node slice of a
// pool, or a pool. gateway marks a pool's gateway rather than addresses it
// hands out.
type ownedRange struct {
	r       AddrRange
	owner   int
	gateway bool
}

// clash is the first place where ranges of two owners overlap; b starts at
// or after a.
type clash struct {
	a, b ownedRange
}

// shared is the part of the range both sides of the clash cover.
func (c clash) shared() AddrRange {
	last := c.a.r.Last
	if c.b.r.Last.Less(last) {
		last = c.b.r.Last
	}
	return AddrRange{First: c.b.r.First, Last: last}
}

// Bounds on findClashes, so a config where everything overlaps everything
// still fails fast: at most maxClashes are reported, and the sweep stops
// after maxOverlapChecks overlapping comparisons of any kind.
const (
	maxClashes       = 10
	maxOverlapChecks = 10_000
)

// findClashes reports, once per pair of owners, where ranges of different
// owners overlap. Two gateways never clash with each other (pools may share
// a subnet and its gateway). It sorts all and runs in O(n log n + overlaps):
// only ranges that reach the current start are kept to compare with.
func findClashes(all []ownedRange) []clash {
	slices.SortStableFunc(all, func(x, y ownedRange) int { return x.r.First.Compare(y.r.First) })
	var out []clash
	var active []ownedRange // ranges seen so far that reach the current one
	reported := map[[2]int]bool{}
	checks := 0
	for _, cur := range all {
		active = slices.DeleteFunc(active, func(o ownedRange) bool { return o.r.Last.Less(cur.r.First) })
		for _, prev := range active {
			if checks++; checks > maxOverlapChecks || len(out) == maxClashes {
				return out
			}
			pair := [2]int{min(prev.owner, cur.owner), max(prev.owner, cur.owner)}
			if prev.owner == cur.owner || (prev.gateway && cur.gateway) || reported[pair] {
				continue
			}
			reported[pair] = true
			out = append(out, clash{a: prev, b: cur})
		}
		active = append(active, cur)
	}
	return out
}

// checkPoolOverlaps refuses pools that would hand out the same address on
// this node, or hand out another pool's gateway: the allocator counts each
// address once, so free counts and exhaustion would be wrong for both.
// pools are all the config's pools, in config order.
func checkPoolOverlaps(pools []*Pool) []error {
	if len(pools) < 2 {
		return nil
	}
	n := 0
	for _, p := range pools {
		n += len(p.spans) + 1
	}
	all := make([]ownedRange, 0, n)
	gateways := map[netip.Addr]bool{}
	for owner, p := range pools {
		for _, r := range p.spans {
			all = append(all, ownedRange{r: r, owner: owner})
		}
		if p.Gateway.IsValid() && !gateways[p.Gateway] {
			gateways[p.Gateway] = true // pools sharing a subnet may share its gateway
			all = append(all, ownedRange{r: single(p.Gateway), owner: owner, gateway: true})
		}
	}
	var errs []error
	for _, c := range findClashes(all) {
		errs = append(errs, poolClash(pools, c))
	}
	return errs
}

func poolClash(pools []*Pool, c clash) error {
	name := func(owner int) string { return pools[owner].Name() }
	a, b := c.a, c.b
	if a.owner > b.owner {
		a, b = b, a
	}
	if a.gateway || b.gateway {
		gw, pool := a, b
		if b.gateway {
			gw, pool = b, a
		}
		return fmt.Errorf("pools[%d] %q: hands out %s, the gateway of pools[%d] %q: exclude it from pools[%d] or give the pools disjoint addresses",
			pool.owner, name(pool.owner), gw.r.First, gw.owner, name(gw.owner), pool.owner)
	}
	return fmt.Errorf("pools[%d] %q and pools[%d] %q: both hand out %s on this node: give each pool its own addresses (disjoint subnets, ranges or excludes)",
		a.owner, name(a.owner), b.owner, name(b.owner), c.shared())
}
