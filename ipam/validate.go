package ipam

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
)

const (
	subnetHint  = "want e.g. 10.10.0.0/24 or fd00:10::/64"
	maxNameLen  = 63
	nameHint    = "want lowercase letters, digits, '-', '_' or '.', starting and ending with a letter or digit, at most 63 characters (e.g. rail0)"
	minMTU4     = 68
	minMTU6     = 1280
	maxMTU      = 65535
	excludeHint = "want an address (10.0.0.5) or a CIDR (10.0.0.16/28) inside the subnet"
	// nodeNameHint says where raild takes the node name from.
	nodeNameHint = "set the node name (raild: nodeName in the config, --node-name, or $NODE_NAME, usually from the pod's spec.nodeName)"
)

// problems collects the errors of one pool so all of them are reported.
type problems []error

func (p *problems) addf(format string, args ...any) {
	*p = append(*p, fmt.Errorf(format, args...))
}

func (p problems) join() error { return errors.Join(p...) }

func checkName(errs *problems, at, name string) {
	if name == "" {
		errs.addf("%s.name: empty: give the pool a name, e.g. rail0", at)
		return
	}
	if !validName(name) {
		errs.addf("%s.name %q: invalid: %s", at, name, nameHint)
	}
}

func validName(name string) bool {
	if len(name) > maxNameLen {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		alnum := c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
		inner := c == '-' || c == '_' || c == '.'
		if !alnum && (!inner || i == 0 || i == len(name)-1) {
			return false
		}
	}
	return true
}

// parseSubnet parses a pool or node-slice subnet; the host bits are masked.
func parseSubnet(errs *problems, field, s string) (netip.Prefix, bool) {
	if s == "" {
		errs.addf("%s: empty: %s", field, subnetHint)
		return netip.Prefix{}, false
	}
	p, err := netip.ParsePrefix(s)
	if err != nil || p.Addr().Is4In6() {
		errs.addf("%s %q: invalid CIDR: %s", field, s, subnetHint)
		return netip.Prefix{}, false
	}
	return p.Masked(), true
}

// parseAddrIn parses an address that must lie inside subnet.
func parseAddrIn(errs *problems, field, s string, subnet netip.Prefix) (netip.Addr, bool) {
	a, err := netip.ParseAddr(s)
	if err != nil || a.Zone() != "" || a.Is4In6() {
		errs.addf("%s %q: invalid address: want e.g. %s", field, s, exampleAddr(subnet))
		return netip.Addr{}, false
	}
	if !subnet.Contains(a) {
		errs.addf("%s %q: outside subnet %s: want an address inside it, e.g. %s", field, s, subnet, exampleAddr(subnet))
		return netip.Addr{}, false
	}
	return a, true
}

func exampleAddr(subnet netip.Prefix) string {
	if a := subnet.Addr().Next(); subnet.Contains(a) {
		return a.String()
	}
	return subnet.Addr().String()
}

func checkMTU(errs *problems, at string, mtu int, v6 bool) {
	lo := minMTU4
	if v6 {
		lo = minMTU6
	}
	if mtu != 0 && (mtu < lo || mtu > maxMTU) {
		errs.addf("%s.mtu %d: out of range: want %d..%d for this subnet's family (IPv4 from %d, IPv6 from %d), or omit it", at, mtu, lo, maxMTU, minMTU4, minMTU6)
	}
}

func checkBinding(errs *problems, at string, c PoolConfig) {
	if c.Rail != nil && *c.Rail < 0 {
		errs.addf("%s.rail %d: negative: want a rail index >= 0, or omit it", at, *c.Rail)
	}
	seen := map[string]int{}
	for i, nic := range c.NICs {
		if strings.TrimSpace(nic) == "" {
			errs.addf("%s.nics[%d]: empty: want a NIC name (mlx5_0, ens1f0np0) or a PCI address (0000:3b:00.0)", at, i)
			continue
		}
		if j, dup := seen[nic]; dup {
			errs.addf("%s.nics[%d] %q: duplicate of nics[%d]: list each NIC once", at, i, nic, j)
			continue
		}
		seen[nic] = i
	}
}

func parseGateway(errs *problems, at, s string, subnet netip.Prefix) netip.Addr {
	if s == "" {
		return netip.Addr{}
	}
	gw, ok := parseAddrIn(errs, at+".gateway", s, subnet)
	if !ok {
		return netip.Addr{}
	}
	if reserved(subnet, gw) {
		errs.addf("%s.gateway %q: is the network or broadcast address of %s: want a host address, or omit gateway", at, s, subnet)
		return netip.Addr{}
	}
	return gw
}

// reserved reports whether a is the network address (IPv4 and IPv6) or the
// broadcast address (IPv4) of subnet. /31, /32, /127 and /128 have none.
func reserved(subnet netip.Prefix, a netip.Addr) bool {
	whole := prefixRange(subnet)
	if subnet.Bits() >= subnet.Addr().BitLen()-1 {
		return false
	}
	return a == whole.First || (subnet.Addr().Is4() && a == whole.Last)
}

func parseRoutes(errs *problems, at string, routes []RouteConfig, subnet netip.Prefix) []Route {
	out := make([]Route, 0, len(routes))
	for i, rc := range routes {
		field := fmt.Sprintf("%s.routes[%d]", at, i)
		dst, err := netip.ParsePrefix(rc.Dst)
		if err != nil || dst.Addr().Is4In6() {
			errs.addf("%s.dst %q: invalid CIDR: want e.g. 10.20.0.0/16 or fd00:20::/64", field, rc.Dst)
			continue
		}
		if dst.Addr().Is4() != subnet.Addr().Is4() {
			errs.addf("%s.dst %q: address family differs from subnet %s: want a route of the same family", field, rc.Dst, subnet)
			continue
		}
		r := Route{Dst: dst.Masked()}
		if rc.GW != "" {
			gw, err := netip.ParseAddr(rc.GW)
			if err != nil || gw.Zone() != "" || gw.Is4() != subnet.Addr().Is4() || gw.Is4In6() {
				errs.addf("%s.gw %q: invalid: want an address of the subnet's family, e.g. %s, or omit gw", field, rc.GW, exampleAddr(subnet))
				continue
			}
			r.GW = gw
		}
		out = append(out, r)
	}
	return out
}

func parseExcludes(errs *problems, at string, excl []string, subnet netip.Prefix) []AddrRange {
	out := make([]AddrRange, 0, len(excl))
	for i, s := range excl {
		r, err := parseAddrOrPrefix(s)
		if err != nil {
			errs.addf("%s.exclude[%d] %q: invalid: %s", at, i, s, excludeHint)
			continue
		}
		if !subnet.Contains(r.First) || !subnet.Contains(r.Last) {
			errs.addf("%s.exclude[%d] %q: outside subnet %s: %s", at, i, s, subnet, excludeHint)
			continue
		}
		out = append(out, r)
	}
	return out
}

func parseAddrOrPrefix(s string) (AddrRange, error) {
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		if err != nil || p.Addr().Is4In6() {
			return AddrRange{}, fmt.Errorf("parse %q: invalid CIDR", s)
		}
		return prefixRange(p), nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil || a.Zone() != "" || a.Is4In6() {
		return AddrRange{}, fmt.Errorf("parse %q: invalid address", s)
	}
	return AddrRange{First: a, Last: a}, nil
}

// parseRanges parses ranges inside subnet and checks they are disjoint
// among themselves (sorted once, so many ranges stay cheap).
func parseRanges(errs *problems, at string, ranges []RangeConfig, subnet netip.Prefix) []AddrRange {
	out := make([]AddrRange, 0, len(ranges))
	owned := make([]ownedRange, 0, len(ranges))
	for i, rc := range ranges {
		field := fmt.Sprintf("%s.ranges[%d]", at, i)
		start, ok1 := parseAddrIn(errs, field+".start", rc.Start, subnet)
		end, ok2 := parseAddrIn(errs, field+".end", rc.End, subnet)
		if !ok1 || !ok2 {
			continue
		}
		if end.Less(start) {
			errs.addf("%s: start %s is after end %s: swap them", field, start, end)
			continue
		}
		r := AddrRange{First: start, Last: end}
		out = append(out, r)
		owned = append(owned, ownedRange{r: r, owner: i})
	}
	for _, c := range findClashes(owned) {
		later, earlier := c.b, c.a
		if later.owner < earlier.owner {
			later, earlier = earlier, later
		}
		errs.addf("%s.ranges[%d] %s: overlaps ranges[%d] %s: make the ranges disjoint", at, later.owner, later.r, earlier.owner, earlier.r)
	}
	return out
}
