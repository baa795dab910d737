package service

import (
	"context"
	"fmt"

	"github.com/railcni/rail/daemon/placement"
	"github.com/railcni/rail/ipam"
	"github.com/railcni/rail/pkg/api"
)

// DRAClaim is one device a pod's DRA claim of Rail's own driver gave it
// (daemon/draplugin): the scheduler chose it, the kubelet had it
// prepared, and the pod's CNI ADD attaches it instead of placing.
type DRAClaim struct {
	Claim  string   // namespace/name
	Device string   // the device's name in the slice
	NIC    string   // the port (mlx5_0, mlx4_0:2); for a VF its PF's port
	VF     string   // a VF's PCI address in vf mode
	Mode   api.Mode // the claim's mode (the device's when it named none)
	Pool   string   // the claim's pool ("": the attachment's as without claims)
	// VFKeys are the claim's VF settings (nil: none); a netconf's own
	// keys still win over them, as over a pool's.
	VFKeys *api.VFConfig
}

// DRAClaims lists the Rail devices a pod's prepared claims hold.
type DRAClaims func(namespace, name, uid string) []DRAClaim

// draClaims are the attachment's pod's Rail devices; none for an
// address-only attachment (rail-ipam) or a pod without claims.
func (s *Service) draClaims(req api.AllocateRequest) []DRAClaim {
	if s.opt.DRAClaims == nil || !req.Mode.Attaches() || req.PodName == "" {
		return nil
	}
	return s.opt.DRAClaims(req.PodNamespace, req.PodName, req.PodUID)
}

// allocateClaimed attaches exactly the devices the pod's claims hold, in
// their mode and pool: no attach policy (the claim is the pod's ask), no
// choice (the scheduler made it), no distance bound (the distance is
// reported); the node's own NICs and other pods' holds are still refused.
func (s *Service) allocateClaimed(ctx context.Context, req api.AllocateRequest, v *view, claimed []DRAClaim) (*api.Plan, error) {
	for _, c := range claimed[1:] {
		if c.Mode != claimed[0].Mode || c.Pool != claimed[0].Pool {
			return nil, s.countError("allocate", "dra_claims", &api.Error{Code: api.CodeInvalidConfig,
				Msg: "the pod's DRA claims disagree",
				Details: fmt.Sprintf("claim %s gives device %s in mode %s pool %q, claim %s device %s in mode %s pool %q: one attachment takes one mode and pool",
					claimed[0].Claim, claimed[0].Device, claimed[0].Mode, claimed[0].Pool, c.Claim, c.Device, c.Mode, c.Pool)})
		}
	}
	req.Mode = claimed[0].Mode
	if claimed[0].Pool != "" {
		req.Pool = claimed[0].Pool
	}
	pool, err := s.explicitPool(req, v)
	if err != nil {
		return nil, err
	}
	gpus, _, err := s.resolveGPUs(ctx, req, v, pool)
	if err != nil {
		return nil, err
	}
	input := placement.Input{GPUs: gpus, Mode: req.Mode, MaxNICs: len(claimed)}
	place := s.placeClaimed(claimed)
	if req.Mode == api.ModeVF {
		for _, c := range claimed {
			input.NICs = append(input.NICs, c.VF) // pinned: these VFs or nothing
		}
		place = s.placeVFs
	}
	plan, err := s.allocatePlaced(v, req, pool, gpus, input, place)
	if err != nil {
		return nil, err
	}
	return withClaimVFKeys(plan, claimed), nil
}

// placeClaimed gives the claims' ports.
func (s *Service) placeClaimed(claimed []DRAClaim) placeFunc {
	nics := make([]string, len(claimed))
	for i, c := range claimed {
		nics[i] = c.NIC
	}
	return func(v *view, req api.AllocateRequest, pool string, input placement.Input, use placement.Use) ([]placement.Pick, []ipam.Request, error) {
		picks, err := v.node.Claimed(input, nics, use)
		if err != nil {
			return nil, nil, noNICError{fmt.Errorf("the device of the pod's DRA claim %s: %w", claimed[0].Claim, err)}
		}
		picks, names, err := s.interfaceNames(v.node, req, picks)
		if err != nil {
			return nil, nil, err
		}
		reqs, err := s.leaseRequests(v, req, pool, picks, names)
		return picks, reqs, err
	}
}

// withClaimVFKeys lays each claimed VF's keys over its pool's in the plan.
func withClaimVFKeys(plan *api.Plan, claimed []DRAClaim) *api.Plan {
	for i := range plan.Interfaces {
		vf := plan.Interfaces[i].VF
		if vf == nil {
			continue
		}
		for _, c := range claimed {
			if c.VF != vf.PCI || c.VFKeys == nil {
				continue
			}
			base := api.VFConfig{}
			if vf.PoolConfig != nil {
				base = *vf.PoolConfig
			}
			merged := c.VFKeys.Over(base)
			vf.PoolConfig = &merged
		}
	}
	return plan
}
