package ipam

import (
	"fmt"
	"net/netip"
)

// nodeRanges validates every node slice of the pool (one config serves the
// whole cluster, so a mistake for another node is still a mistake) and
// returns this node's ranges. hasSlice is false when the pool lists nodes
// and node is not one of them.
func nodeRanges(errs *problems, at string, c PoolConfig, subnet netip.Prefix, node string) (ranges []AddrRange, hasSlice bool) {
	if len(c.Nodes) == 0 {
		if len(c.Ranges) == 0 {
			return []AddrRange{prefixRange(subnet)}, true
		}
		return parseRanges(errs, at, c.Ranges, subnet), true
	}
	if len(c.Ranges) > 0 {
		errs.addf("%s: ranges and nodes are both set: put each node's ranges under nodes[].ranges and drop ranges", at)
	}
	if node == "" {
		errs.addf("%s.nodes: this node's name is empty, so its slice cannot be chosen: %s", at, nodeNameHint)
	}
	var all []ownedRange
	seen := map[string]int{}
	for i, ns := range c.Nodes {
		field := fmt.Sprintf("%s.nodes[%d]", at, i)
		switch j, dup := seen[ns.Node]; {
		case ns.Node == "":
			errs.addf("%s.node: empty: want the Kubernetes node name", field)
		case dup:
			errs.addf("%s.node %q: duplicate of nodes[%d]: give each node one entry", field, ns.Node, j)
		default:
			seen[ns.Node] = i
		}
		rs := sliceRanges(errs, field, ns, subnet)
		for _, r := range rs {
			all = append(all, ownedRange{r: r, owner: i})
		}
		if node != "" && ns.Node == node {
			ranges, hasSlice = rs, true
		}
	}
	checkSliceOverlaps(errs, at, c.Nodes, all)
	return ranges, hasSlice
}

func sliceRanges(errs *problems, field string, ns NodeSlice, subnet netip.Prefix) []AddrRange {
	switch {
	case ns.Subnet != "" && len(ns.Ranges) > 0:
		errs.addf("%s: subnet and ranges are both set: set one of them", field)
	case ns.Subnet != "":
		p, ok := parseSubnet(errs, field+".subnet", ns.Subnet)
		if !ok {
			return nil
		}
		if p.Addr().Is4() != subnet.Addr().Is4() || p.Bits() < subnet.Bits() || !subnet.Contains(p.Addr()) {
			errs.addf("%s.subnet %q: outside pool subnet %s: want a part of it, e.g. %s", field, ns.Subnet, subnet, examplePart(subnet))
			return nil
		}
		return []AddrRange{prefixRange(p)}
	case len(ns.Ranges) > 0:
		return parseRanges(errs, field, ns.Ranges, subnet)
	default:
		errs.addf("%s: neither subnet nor ranges is set: give node %q a subnet (e.g. %s) or ranges", field, ns.Node, examplePart(subnet))
	}
	return nil
}

// examplePart is a prefix inside subnet, for error messages.
func examplePart(subnet netip.Prefix) netip.Prefix {
	return netip.PrefixFrom(subnet.Addr(), min(subnet.Bits()+2, subnet.Addr().BitLen()))
}

// checkSliceOverlaps reports two nodes whose slices share an address: both
// would hand it out.
func checkSliceOverlaps(errs *problems, at string, nodes []NodeSlice, all []ownedRange) {
	for _, c := range findClashes(all) {
		errs.addf("%s.nodes[%d] (node %q) %s: overlaps nodes[%d] (node %q) %s: give each node its own addresses",
			at, c.b.owner, nodes[c.b.owner].Node, c.b.r, c.a.owner, nodes[c.a.owner].Node, c.a.r)
	}
}
