package service

import (
	"github.com/railcni/rail/daemon/placement"
	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/topology"
)

// distanceBounds are the bounds that apply to an attachment: the netconf's
// maxDistance tightened by the explicit pool's, or, when each NIC brings
// its own pool, that pool's bound per NIC. raild's config checked the pool
// bounds at start, so a name that does not parse here is no bound.
func distanceBounds(v *view, req api.AllocateRequest, pool string) (*placement.Bound, map[string]*placement.Bound) {
	var bound *placement.Bound
	if req.MaxDistance != nil {
		bound = &placement.Bound{Max: *req.MaxDistance, Source: "netconf maxDistance"}
	}
	if pool != "" {
		return placement.Tighter(bound, poolBound(v, pool)), nil
	}
	perNIC := map[string]*placement.Bound{}
	for _, nic := range v.node.Machine.NICs {
		if name, err := v.boundPool(nic.Name); err == nil {
			if b := poolBound(v, name); b != nil {
				perNIC[nic.Name] = b
			}
		}
	}
	return bound, perNIC
}

// poolBound is a pool's maxDistance, nil when it has none.
func poolBound(v *view, name string) *placement.Bound {
	pool, ok := v.get(name)
	if !ok || pool.Config.MaxDistance == "" {
		return nil
	}
	class, err := topology.ParseClass(pool.Config.MaxDistance)
	if err != nil {
		return nil
	}
	return &placement.Bound{Max: class, Source: "pool " + name + " maxDistance"}
}
