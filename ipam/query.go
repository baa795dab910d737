package ipam

import (
	"fmt"
	"slices"
)

// PoolStat is the usage of one pool on this node.
type PoolStat struct {
	Name    string   `json:"name"`
	Subnet  string   `json:"subnet"`
	Size    uint64   `json:"size"`    // addresses this node may hand out (saturated at MaxUint64)
	Used    uint64   `json:"used"`    // leased
	Cooling uint64   `json:"cooling"` // released, waiting for the cooldown
	Free    uint64   `json:"free"`
	Rail    *int     `json:"rail,omitempty"`
	NICs    []string `json:"nics,omitempty"`

	NoNodeSlice bool   `json:"noNodeSlice,omitempty"` // the pool lists nodes and this node is not one
	Note        string `json:"note,omitempty"`
}

// Get returns the leases a CNI ADD of (sandbox, attachment, network) made,
// sorted by interface name.
func (a *Allocator) Get(sandbox, attachment, network string) []Lease {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []Lease
	for k := range a.bySandbox[sandbox] {
		e := a.leases[k]
		if e.committed && e.lease.CNIIfName == attachment && e.lease.Network == network {
			out = append(out, cloneLease(e.lease))
		}
	}
	slices.SortFunc(out, compareLeases)
	return out
}

// Leases returns every lease on disk, sorted by sandbox and interface.
func (a *Allocator) Leases() []Lease {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]Lease, 0, len(a.leases))
	for _, e := range a.leases {
		if e.committed {
			out = append(out, cloneLease(e.lease))
		}
	}
	slices.SortFunc(out, compareLeases)
	return out
}

// Stats returns the usage of every pool, in config order.
func (a *Allocator) Stats() []PoolStat {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.clock()
	used := map[string]uint64{}
	for _, e := range a.leases {
		if e.committed {
			used[e.lease.Pool]++
		}
	}
	cooling := map[string]uint64{}
	for _, c := range a.cooling {
		if !a.expired(c.at, now) {
			cooling[c.pool]++
		}
	}
	var out []PoolStat
	for _, p := range a.pools.List() {
		st := PoolStat{
			Name: p.Name(), Subnet: p.Prefix.String(), Size: p.Size(),
			Used: used[p.Name()], Cooling: cooling[p.Name()],
			NICs: slices.Clone(p.Config.NICs), NoNodeSlice: !p.HasNodeSlice(),
		}
		st.Free = satSub(satSub(st.Size, st.Used), st.Cooling)
		if p.Config.Rail != nil {
			rail := *p.Config.Rail
			st.Rail = &rail
		}
		if st.NoNodeSlice {
			st.Note = fmt.Sprintf("no addresses on node %q: the pool's nodes do not list it", a.pools.Node())
		}
		out = append(out, st)
	}
	return out
}

func cloneLease(l Lease) Lease {
	l.NICs = slices.Clone(l.NICs)
	return l
}
