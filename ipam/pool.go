package ipam

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"sync"
)

// Pool is a validated pool with this node's allocatable addresses.
// Treat it as read-only.
type Pool struct {
	Config  PoolConfig
	Prefix  netip.Prefix // the subnet, masked
	Gateway netip.Addr   // zero when the pool has none
	Routes  []Route
	MTU     int

	node     string
	hasSlice bool
	spans    []AddrRange // allocatable on this node: sorted, disjoint, never empty ranges
	size     uint64
}

// Name is the pool's name.
func (p *Pool) Name() string { return p.Config.Name }

// Size is the number of addresses this node may hand out from the pool,
// saturated at MaxUint64 (an IPv6 /64).
func (p *Pool) Size() uint64 { return p.size }

// HasNodeSlice is false when the pool lists nodes and this node is not one.
func (p *Pool) HasNodeSlice() bool { return p.hasSlice }

// Ranges are the addresses this node may hand out: ranges or node slice,
// minus excludes, gateway, network and broadcast addresses.
func (p *Pool) Ranges() []AddrRange { return slices.Clone(p.spans) }

// Contains reports whether this node may hand out a from the pool.
func (p *Pool) Contains(a netip.Addr) bool {
	i, found := slices.BinarySearchFunc(p.spans, a, func(r AddrRange, a netip.Addr) int {
		if r.Last.Less(a) {
			return -1
		}
		if a.Less(r.First) {
			return 1
		}
		return 0
	})
	return found && p.spans[i].Contains(a)
}

// Pools is the validated set of pools of this node. Pools may be added
// while it is in use (Add); none is ever changed or removed.
type Pools struct {
	node string

	mu     sync.RWMutex
	list   []*Pool
	byName map[string]*Pool
}

// NewPools validates cfg (all pools, every field, every node's slice) and
// keeps this node's part of each pool. All problems are reported at once.
func NewPools(cfg []PoolConfig, node string) (*Pools, error) {
	ps := &Pools{node: node, byName: make(map[string]*Pool, len(cfg))}
	var errs []error
	firstIndex := make(map[string]int, len(cfg))
	for i, c := range cfg {
		if j, dup := firstIndex[c.Name]; dup && c.Name != "" {
			errs = append(errs, fmt.Errorf("pools[%d].name %q: duplicate of pools[%d]: pool names must be unique", i, c.Name, j))
		} else {
			firstIndex[c.Name] = i
		}
		p, err := buildPool(cloneConfig(c), fmt.Sprintf("pools[%d]", i), node)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if _, dup := ps.byName[p.Name()]; !dup {
			ps.byName[p.Name()] = p
			ps.list = append(ps.list, p)
		}
	}
	if len(errs) == 0 {
		errs = checkPoolOverlaps(ps.list) // every pool built: list index = config index
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return ps, nil
}

// CheckPool validates one pool as NewPools does, for node, naming the
// fields under at (e.g. `railpool "decode".spec`) instead of pools[i].
// Pools that come from elsewhere than the config file use it to report
// their own mistakes before they are handed to NewPools.
func CheckPool(c PoolConfig, at, node string) error {
	_, err := buildPool(cloneConfig(c), at, node)
	return err
}

func buildPool(c PoolConfig, at, node string) (*Pool, error) {
	var errs problems
	checkName(&errs, at, c.Name)
	checkBinding(&errs, at, c)
	subnet, ok := parseSubnet(&errs, at+".subnet", c.Subnet)
	if !ok || !checkUnicast(&errs, at+".subnet", c.Subnet, subnet) {
		return nil, errs.join() // every other check needs a usable subnet
	}
	checkMTU(&errs, at, c.MTU, subnet.Addr().Is6())
	p := &Pool{Config: c, Prefix: subnet, MTU: c.MTU, node: node}
	p.Gateway = parseGateway(&errs, at, c.Gateway, subnet)
	p.Routes = parseRoutes(&errs, at, c.Routes, subnet)
	excludes := parseExcludes(&errs, at, c.Exclude, subnet)
	ranges, hasSlice := nodeRanges(&errs, at, c, subnet, node)
	if len(errs) > 0 {
		return nil, errs.join()
	}
	p.hasSlice = hasSlice
	p.spans = allocatable(ranges, subnet, p.Gateway, excludes)
	p.size = totalSize(p.spans)
	if hasSlice && p.size == 0 {
		return nil, fmt.Errorf("%s: no address left to hand out on node %q after removing the gateway, excludes, network and broadcast addresses: widen the ranges or drop excludes", at, node)
	}
	return p, nil
}

// allocatable removes network, broadcast, gateway and excludes from ranges
// in one sorted sweep (start-up stays near-linear in the number of excludes).
func allocatable(ranges []AddrRange, subnet netip.Prefix, gateway netip.Addr, excludes []AddrRange) []AddrRange {
	spans := slices.Clone(ranges)
	sortRanges(spans)
	cuts := slices.Clone(excludes)
	whole := prefixRange(subnet)
	for _, a := range []netip.Addr{whole.First, whole.Last} {
		if reserved(subnet, a) {
			cuts = append(cuts, single(a))
		}
	}
	if gateway.IsValid() {
		cuts = append(cuts, single(gateway))
	}
	return subtractAll(spans, cuts)
}

// Node is the node name the pools were built for.
func (ps *Pools) Node() string {
	if ps == nil {
		return ""
	}
	return ps.node
}

// Get returns the pool called name.
func (ps *Pools) Get(name string) (*Pool, bool) {
	if ps == nil {
		return nil, false
	}
	ps.mu.RLock()
	defer ps.mu.RUnlock()
	p, ok := ps.byName[name]
	return p, ok
}

// List returns the pools in config order, then those added, in order.
func (ps *Pools) List() []*Pool {
	if ps == nil {
		return nil
	}
	ps.mu.RLock()
	defer ps.mu.RUnlock()
	return slices.Clone(ps.list)
}

// Names returns the pool names in config order.
func (ps *Pools) Names() []string {
	if ps == nil {
		return nil
	}
	ps.mu.RLock()
	defer ps.mu.RUnlock()
	names := make([]string, len(ps.list))
	for i, p := range ps.list {
		names[i] = p.Name()
	}
	return names
}
