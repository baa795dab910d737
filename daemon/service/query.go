package service

import (
	"context"
	"fmt"
	"sort"

	"github.com/railcni/rail/pkg/api"
)

// Check returns the plan recorded for an attachment.
func (s *Service) Check(_ context.Context, req api.AttachmentRequest) (*api.Plan, error) {
	if err := ValidateAttachment(req); err != nil {
		return nil, err
	}
	leases := s.readSandbox(req.Sandbox)
	if !holdsAttachment(leases, req.CNIIfName, req.Network) {
		return nil, &api.Error{Code: api.CodeUnknownContainer, Msg: "no lease for this attachment",
			Details: fmt.Sprintf("sandbox %s interface %s network %s holds nothing in raild", req.Sandbox, req.CNIIfName, req.Network)}
	}
	return s.planOf(s.view(), req.Sandbox, req.CNIIfName, req.Network, leases), nil
}

// Leases lists every lease, ordered by sandbox and interface.
func (s *Service) Leases() []api.Lease {
	leases := s.alloc.Leases()
	out := make([]api.Lease, 0, len(leases))
	for _, l := range leases {
		out = append(out, toAPILease(l))
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Sandbox != out[j].Sandbox {
			return out[i].Sandbox < out[j].Sandbox
		}
		return lessIfName(out[i].IfName, out[j].IfName)
	})
	return out
}

// Pools lists the pools with their use on this node.
func (s *Service) Pools() []api.PoolStatus {
	stats := s.alloc.Stats()
	out := make([]api.PoolStatus, 0, len(stats))
	for _, st := range stats {
		out = append(out, api.PoolStatus{Name: st.Name, Subnet: st.Subnet, Size: st.Size, Used: st.Used,
			Cooling: st.Cooling, Free: st.Free, Rail: st.Rail, Bound: st.NICs})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Status is healthy when the named pool (or every pool) has a free address.
func (s *Service) Status(pool string) (*api.Status, error) {
	pools := s.Pools()
	st := &api.Status{Healthy: true, Pools: pools}
	if pool != "" {
		st.Pools = nil
		for _, p := range pools {
			if p.Name == pool {
				st.Pools = []api.PoolStatus{p}
			}
		}
		if st.Pools == nil {
			return nil, &api.Error{Code: api.CodeInvalidConfig, Msg: "invalid field \"pool\"",
				Details: fmt.Sprintf("pool %q does not exist on this node; pools: %v", pool, s.view().names())}
		}
	}
	for _, p := range st.Pools {
		if p.Size > 0 && p.Free == 0 {
			st.Healthy = false
			st.Reason = fmt.Sprintf("pool %s is exhausted (%d of %d used, %d cooling down)", p.Name, p.Used, p.Size, p.Cooling)
		}
	}
	if err := s.StoreHealth(); err != nil {
		st.Healthy, st.Reason = false, err.Error()
	}
	return st, nil
}
