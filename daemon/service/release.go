package service

import (
	"context"
	"fmt"
	"sort"

	"github.com/railcni/rail/ipam"
	"github.com/railcni/rail/pkg/api"
)

// Release frees every lease of an attachment. An unknown attachment is not
// an error (DEL is idempotent), and only this sandbox's leases are touched.
func (s *Service) Release(_ context.Context, req api.AttachmentRequest) error {
	if err := ValidateAttachment(req); err != nil {
		return err
	}
	done := s.enter(attachKey(req.Sandbox, req.CNIIfName, req.Network))
	defer done()
	released, err := s.alloc.Release(req.Sandbox, req.CNIIfName, req.Network)
	if err != nil {
		return s.countError("release", "store", &api.Error{Code: api.CodeIO, Msg: "release leases", Details: err.Error()})
	}
	s.logReleased(released, "released by CNI DEL")
	s.reportReleased(req.Network, released)
	return nil
}

// Check returns the plan recorded for an attachment.
func (s *Service) Check(_ context.Context, req api.AttachmentRequest) (*api.Plan, error) {
	if err := ValidateAttachment(req); err != nil {
		return nil, err
	}
	leases := s.alloc.Get(req.Sandbox, req.CNIIfName, req.Network)
	if len(leases) == 0 {
		return nil, &api.Error{Code: api.CodeUnknownContainer, Msg: "no lease for this attachment",
			Details: fmt.Sprintf("sandbox %s interface %s network %s holds nothing in raild", req.Sandbox, req.CNIIfName, req.Network)}
	}
	return s.planFromLeases(req.Sandbox, req.CNIIfName, req.Network, leases), nil
}

// GC releases the network's leases that the runtime no longer lists.
func (s *Service) GC(_ context.Context, req api.GCRequest) (*api.GCResult, error) {
	if req.Network == "" {
		return nil, &api.Error{Code: api.CodeInvalidConfig, Msg: "invalid field \"network\"", Details: "gc needs the network name"}
	}
	valid := make([]ipam.Key, 0, len(req.Valid))
	for _, a := range req.Valid {
		valid = append(valid, ipam.Key{Sandbox: a.Sandbox, IfName: a.CNIIfName})
	}
	released, err := s.alloc.GC(req.Network, valid)
	if err != nil {
		return nil, s.countError("gc", "store", &api.Error{Code: api.CodeIO, Msg: "gc leases", Details: err.Error()})
	}
	s.logReleased(released, "not in the runtime's valid attachments (CNI GC)")
	gone, err := s.reconcile()
	if err != nil {
		return nil, s.countError("gc", "store", &api.Error{Code: api.CodeIO, Msg: "gc leases", Details: err.Error()})
	}
	released = append(released, gone...)
	res := &api.GCResult{Released: []api.Lease{}}
	for _, l := range released {
		res.Released = append(res.Released, toAPILease(l))
	}
	return res, nil
}

// ReleaseSandbox is the second signal (NRI StopPodSandbox/RemovePodSandbox)
// for a pod whose DEL never came. A NIC moved into the pod is released only
// once its netns is gone: until then it is still inside the pod and handing
// it to another pod would fail that pod's ADD.
func (s *Service) ReleaseSandbox(_ context.Context, sandbox string) error {
	released, err := s.alloc.ReleaseIf(func(l ipam.Lease) bool {
		if l.Sandbox != sandbox {
			return false
		}
		return !api.Mode(l.Mode).Exclusive() || l.Netns == "" || !s.opt.NetnsExists(l.Netns)
	})
	if err != nil {
		return fmt.Errorf("release sandbox %s: %w", sandbox, err)
	}
	s.logReleased(released, "pod sandbox stopped")
	return nil
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
				Details: fmt.Sprintf("pool %q does not exist on this node; pools: %v", pool, s.poolNames())}
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
