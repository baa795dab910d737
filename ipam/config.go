package ipam

import (
	"encoding/json"
	"fmt"
	"net/netip"
)

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
	UnresolvedGPUs string `json:"unresolvedGPUs,omitempty"`
	// VFPerGPU, in vf mode, gives each GPU of a pod that names this pool
	// a VF of its own even where GPUs share a PF (a netconf's vfPerGPU
	// wins); other modes ignore it.
	VFPerGPU *bool `json:"vfPerGPU,omitempty"`
	// PoolVF is what vf mode sets on the VFs of this pool's interfaces.
	PoolVF
	Nodes []NodeSlice `json:"nodes,omitempty"` // per-node slices; unlisted nodes get nothing
}

// PoolVF is a pool's VF settings in vf mode, written as sriov-cni (and a
// netconf) writes them, but mac: each VF gets its lease's own. A
// netconf's own keys win, key by key; other modes ignore them. raild
// parses and checks them (api.VFKeys), ipam only carries them.
type PoolVF struct {
	VLAN      *int   `json:"vlan,omitempty"`
	VLANQoS   *int   `json:"vlanQoS,omitempty"`
	VLANProto string `json:"vlanProto,omitempty"`
	Spoofchk  OnOff  `json:"spoofchk,omitempty"`
	Trust     OnOff  `json:"trust,omitempty"`
	LinkState string `json:"link_state,omitempty"`
	MinTxRate *int64 `json:"min_tx_rate,omitempty"`
	MaxTxRate *int64 `json:"max_tx_rate,omitempty"`
}

// OnOff is a setting written "on" or "off", as sriov-cni writes it; a
// bare on/off in YAML (which YAML reads as true/false) is taken too. Any
// other word is kept for raild to refuse by name.
type OnOff string

// UnmarshalJSON takes a string as written, or a bool as on/off.
func (o *OnOff) UnmarshalJSON(b []byte) error {
	var on bool
	if json.Unmarshal(b, &on) == nil {
		*o = map[bool]OnOff{true: "on", false: "off"}[on]
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("want on or off: %w", err)
	}
	*o = OnOff(s)
	return nil
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
	out.VFPerGPU, out.VLAN, out.VLANQoS = clonePtr(c.VFPerGPU), clonePtr(c.VLAN), clonePtr(c.VLANQoS)
	out.MinTxRate, out.MaxTxRate = clonePtr(c.MinTxRate), clonePtr(c.MaxTxRate)
	out.Nodes = make([]NodeSlice, len(c.Nodes))
	for i, n := range c.Nodes {
		out.Nodes[i] = NodeSlice{Node: n.Node, Subnet: n.Subnet, Ranges: append([]RangeConfig(nil), n.Ranges...)}
	}
	if c.Nodes == nil {
		out.Nodes = nil
	}
	return out
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
