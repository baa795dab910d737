package ipam

import "net/netip"

// PoolConfig is one entry of the daemon config's `pools:` list.
// A pool with only Name and Subnet is valid and gives this node the whole
// subnet minus its network, broadcast and gateway addresses.
type PoolConfig struct {
	Name    string        `json:"name"`
	Subnet  string        `json:"subnet"`            // IPv4 or IPv6 CIDR
	Ranges  []RangeConfig `json:"ranges,omitempty"`  // default: the whole subnet
	Exclude []string      `json:"exclude,omitempty"` // addresses or CIDRs inside the subnet
	Gateway string        `json:"gateway,omitempty"` // never handed out
	Routes  []RouteConfig `json:"routes,omitempty"`  // routes for interfaces of this pool
	Rail    *int          `json:"rail,omitempty"`    // pool bound to a rail index
	NICs    []string      `json:"nics,omitempty"`    // pool bound to NICs (names or PCI addresses)
	MTU     int           `json:"mtu,omitempty"`     // 0: leave the MTU alone
	// MaxDistance is the farthest GPU-to-NIC class (PIX..SYS) a pod may get
	// from this pool; raild checks the name, ipam only carries it.
	MaxDistance string `json:"maxDistance,omitempty"`
	// UnresolvedGPUs ("fail" or "ignore") says what ADD does with a GPU
	// the kubelet reports that raild cannot resolve, for attachments that
	// name this pool; raild checks the value, ipam only carries it.
	UnresolvedGPUs string      `json:"unresolvedGPUs,omitempty"`
	Nodes          []NodeSlice `json:"nodes,omitempty"` // per-node slices; unlisted nodes get nothing
}

// RangeConfig is an inclusive range of addresses, e.g. 10.0.0.10 to 10.0.0.99.
type RangeConfig struct {
	Start string `json:"start"`
	End   string `json:"end"`
}

// RouteConfig is a route to install for an interface of the pool. GW is
// optional (an on-link route without it).
type RouteConfig struct {
	Dst string `json:"dst"`
	GW  string `json:"gw,omitempty"`
}

// NodeSlice gives one node its part of a pool: either Subnet (a CIDR inside
// the pool's subnet) or Ranges, not both.
type NodeSlice struct {
	Node   string        `json:"node"`
	Subnet string        `json:"subnet,omitempty"`
	Ranges []RangeConfig `json:"ranges,omitempty"`
}

// Route is a parsed RouteConfig. GW is the zero Addr for an on-link route.
type Route struct {
	Dst netip.Prefix `json:"dst"`
	GW  netip.Addr   `json:"gw,omitzero"`
}

func cloneConfig(c PoolConfig) PoolConfig {
	out := c
	out.Ranges = append([]RangeConfig(nil), c.Ranges...)
	out.Exclude = append([]string(nil), c.Exclude...)
	out.Routes = append([]RouteConfig(nil), c.Routes...)
	out.NICs = append([]string(nil), c.NICs...)
	if c.Rail != nil {
		rail := *c.Rail
		out.Rail = &rail
	}
	out.Nodes = make([]NodeSlice, len(c.Nodes))
	for i, n := range c.Nodes {
		out.Nodes[i] = NodeSlice{Node: n.Node, Subnet: n.Subnet, Ranges: append([]RangeConfig(nil), n.Ranges...)}
	}
	if c.Nodes == nil {
		out.Nodes = nil
	}
	return out
}
