package service

import (
	"fmt"
	"slices"
	"strings"

	"github.com/railcni/rail/daemon/placement"
	"github.com/railcni/rail/ipam"
	"github.com/railcni/rail/pkg/api"
)

// view is the node and its pools as one request reads them: the machine
// taken from the inventory once, the pools from the allocator once, each
// NIC's bound pool worked out at most once. Everything the request decides
// (placement, names, pools, the plan) reads this one view.
type view struct {
	node   *placement.Node
	sorted []*ipam.Pool // by name
	byName map[string]*ipam.Pool
	// bound is each NIC's bound pool ("" for none), filled on first use:
	// an attachment that names its pool never needs it.
	bound map[string]string
}

// view takes the node and the allocator's pools once for a request.
func (s *Service) view() *view {
	list := s.alloc.Pools().List()
	pv := &view{node: s.node(), sorted: list, byName: make(map[string]*ipam.Pool, len(list))}
	for _, p := range list {
		pv.byName[p.Config.Name] = p
	}
	slices.SortFunc(pv.sorted, func(a, b *ipam.Pool) int { return strings.Compare(a.Config.Name, b.Config.Name) })
	return pv
}

// get is the pool called name.
func (pv *view) get(name string) (*ipam.Pool, bool) {
	p, ok := pv.byName[name]
	return p, ok
}

// names are the pools' names, sorted.
func (pv *view) names() []string {
	out := make([]string, len(pv.sorted))
	for i, p := range pv.sorted {
		out[i] = p.Config.Name
	}
	return out
}

// boundPool is the pool bound to a NIC by name, PCI address or rail (the
// first such pool by name); the only pool when no pool is bound to
// anything.
func (pv *view) boundPool(nic string) (string, error) {
	if pv.bound == nil {
		pv.bound = pv.bindNICs()
	}
	if name := pv.bound[nic]; name != "" {
		return name, nil
	}
	if len(pv.sorted) == 1 {
		return pv.sorted[0].Config.Name, nil
	}
	railText := ""
	if rail, ok := pv.node.Rails[nic]; ok {
		railText = fmt.Sprintf(" (rail %d)", rail)
	}
	return "", &api.Error{Code: api.CodeInvalidConfig, Msg: "no pool for NIC " + nic,
		Details: fmt.Sprintf("no pool is bound to %s%s: set \"pool\" in the netconf or the %s annotation, or bind a pool with rail:/nics: in raild's config",
			nic, railText, api.AnnotationPool)}
}

// bindNICs gives each NIC of the node the first pool, by name, bound to it
// by rail or by one of its nics: entries (an entry this node cannot
// resolve binds nothing).
func (pv *view) bindNICs() map[string]string {
	bound := map[string]string{}
	bind := func(nic, pool string) {
		if bound[nic] == "" {
			bound[nic] = pool
		}
	}
	for _, p := range pv.sorted {
		cfg := p.Config
		for nic, rail := range pv.node.Rails {
			if cfg.Rail != nil && *cfg.Rail == rail {
				bind(nic, cfg.Name)
			}
		}
		for _, id := range cfg.NICs {
			resolved, err := pv.node.ResolveNames([]string{id})
			if err != nil {
				continue
			}
			for _, nic := range resolved {
				bind(nic, cfg.Name)
			}
		}
	}
	return bound
}
