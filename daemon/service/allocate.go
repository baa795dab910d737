package service

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/railcni/rail/daemon/placement"
	"github.com/railcni/rail/ipam"
	"github.com/railcni/rail/pkg/api"
)

// Allocate returns the plan of one attachment, placing and leasing on the
// first call and answering from the leases on every later one.
func (s *Service) Allocate(ctx context.Context, req api.AllocateRequest) (*api.Plan, error) {
	plan, err := s.allocate(ctx, req)
	if err != nil {
		s.reportRefused(req, err)
	}
	return plan, err
}

func (s *Service) allocate(ctx context.Context, req api.AllocateRequest) (*api.Plan, error) {
	if err := ValidateAllocate(req); err != nil {
		return nil, err
	}
	done := s.enter(attachKey(req.Sandbox, req.CNIIfName, req.Network))
	defer done()
	claimed := s.draClaims(req)
	// What DELs gave back is read before the view is taken: a NIC or VF
	// released just now is free in it.
	s.awaitReturns()
	// One view of the node and its pools for the whole ADD: placement,
	// names, pools and the plan read the same snapshot.
	v := s.view()
	if leases := s.readSandbox(req.Sandbox); holdsAttachment(leases, req.CNIIfName, req.Network) {
		return withClaimVFKeys(s.planOf(v, req.Sandbox, req.CNIIfName, req.Network, leases), claimed), nil
	}
	req, err := s.withPodAnnotations(ctx, req)
	if err != nil {
		return nil, err
	}
	if len(claimed) > 0 {
		return s.allocateClaimed(ctx, req, v, claimed)
	}
	pool, err := s.explicitPool(req, v)
	if err != nil {
		return nil, err
	}
	if req.Mode == api.ModeIPAM {
		return s.allocateAddressOnly(req, v, pool)
	}
	gpus, pass, err := s.choosePods(ctx, req, v, pool)
	if err != nil || pass != nil {
		return pass, err
	}
	return s.allocateNICs(req, v, pool, gpus)
}

// choosePods applies the attach policy to a chained attachment: a pod
// that does not get rail interfaces gets a pass-through plan, and nothing
// is recorded for it. Otherwise it returns the pod's GPUs.
func (s *Service) choosePods(ctx context.Context, req api.AllocateRequest, v *view, pool string) ([]int, *api.Plan, error) {
	var gpus []int
	resolved := false
	holdsGPUs := func() (bool, error) {
		var held bool
		var err error
		gpus, held, err = s.resolveGPUs(ctx, req, v, pool)
		resolved = true
		return held, err
	}
	if req.Chained {
		ask, err := api.PodAsk(req.Annotations, req.CNIArgs)
		if err != nil {
			return nil, nil, s.countError("allocate", "bad_annotation", &api.Error{Code: api.CodeInvalidConfig,
				Msg: "invalid pod annotation", Details: err.Error()})
		}
		attaches, err := s.opt.Policy.Attaches(ask, holdsGPUs)
		if err != nil {
			return nil, nil, err
		}
		if !attaches {
			return nil, s.passThrough(req, ask), nil
		}
	}
	if !resolved {
		if _, err := holdsGPUs(); err != nil {
			return nil, nil, err
		}
	}
	return gpus, nil, nil
}

func (s *Service) passThrough(req api.AllocateRequest, ask api.Ask) *api.Plan {
	reason := fmt.Sprintf("attach policy %s: the pod holds no GPUs and has no rail annotation", s.opt.Policy)
	switch {
	case ask == api.AskNo:
		reason = "the pod opts out with " + api.AnnotationAttach + ": \"false\""
	case s.opt.Policy == api.PolicyAnnotated:
		reason = "attach policy annotated: the pod has no rail annotation"
	}
	s.log.Debug("pass-through", "sandbox", req.Sandbox, "pod", podName(req.PodNamespace, req.PodName, ""), "why", reason)
	return &api.Plan{Sandbox: req.Sandbox, CNIIfName: req.CNIIfName, Network: req.Network, Mode: req.Mode,
		Interfaces: []api.PlanInterface{}, PassThrough: true, Reason: reason}
}

// enter serialises calls for one attachment key (a runtime retrying ADD
// while the first is still running) without serialising different keys.
func (s *Service) enter(key string) func() {
	for {
		s.mu.Lock()
		wait, busy := s.inflight[key]
		if !busy {
			done := make(chan struct{})
			s.inflight[key] = done
			s.mu.Unlock()
			return func() {
				s.mu.Lock()
				delete(s.inflight, key)
				s.mu.Unlock()
				close(done)
			}
		}
		s.mu.Unlock()
		<-wait
	}
}

func (s *Service) allocateAddressOnly(req api.AllocateRequest, v *view, pool string) (*api.Plan, error) {
	if pool == "" {
		var err error
		if pool, err = onlyPool(v); err != nil {
			return nil, err
		}
	}
	var others []ipam.Lease // the sandbox's leases beside this one
	leases, err := s.alloc.AllocatePlaced(func(use ipam.NICUse) ([]ipam.Request, error) {
		others = otherLeases(use, req)
		return []ipam.Request{s.ipamRequest(req, req.CNIIfName, pool, nil)}, nil
	})
	if err != nil {
		return nil, s.allocError(err)
	}
	s.recordAllocation(leases, nil)
	plan := s.planOf(v, req.Sandbox, req.CNIIfName, req.Network, append(others, leases...))
	plan.Fresh = true
	s.reportAttached(v.node.Machine, req, plan, nil)
	return plan, nil
}

func (s *Service) allocateNICs(req api.AllocateRequest, v *view, pool string, gpus []int) (*api.Plan, error) {
	input, err := s.placementInput(v, req, pool, gpus)
	if err != nil {
		return nil, err
	}
	place := s.place
	if req.Mode == api.ModeVF {
		place = s.placeVFs
	}
	return s.allocatePlaced(v, req, pool, gpus, input, place)
}

// placeFunc chooses NICs for one attachment under the allocator's lock.
type placeFunc func(v *view, req api.AllocateRequest, pool string, input placement.Input, use placement.Use) ([]placement.Pick, []ipam.Request, error)

// allocatePlaced places with place on one view of the node and leases
// what it chose.
func (s *Service) allocatePlaced(v *view, req api.AllocateRequest, pool string, gpus []int, input placement.Input, place placeFunc) (*api.Plan, error) {
	var picks []placement.Pick
	var placeErr error
	var others []ipam.Lease // the sandbox's leases beside this attachment's
	// Placement reads the allocator's NIC use and the leases are reserved
	// in the same critical section: no second copy of the use to keep in
	// step, and no window in which two ADDs see the same NIC free. The
	// sandbox's other leases are read there too, for the policy tables:
	// nothing is read back after the commit.
	leases, err := s.alloc.AllocatePlaced(func(use ipam.NICUse) ([]ipam.Request, error) {
		var reqs []ipam.Request
		others = otherLeases(use, req)
		picks, reqs, placeErr = place(v, req, pool, input, s.placementUse(use))
		if placeErr == nil && req.Mode == api.ModeVF {
			placeErr = s.checkVFMACs(req, reqs, use)
		}
		return reqs, placeErr
	})
	var noNIC noNICError
	switch {
	case errors.As(placeErr, &noNIC) && errors.Is(noNIC.err, placement.ErrVFsHeld):
		return nil, s.countError("allocate", "vfs_held", &api.Error{Code: api.CodeTryAgainLater,
			Msg: "no free VF for this pod now", Details: describeRequest(req, gpus) + ": " + noNIC.err.Error()})
	case errors.As(placeErr, &noNIC):
		return nil, s.countError("allocate", "no_nic", &api.Error{Code: api.CodeNoNIC,
			Msg: "no RDMA NIC for this pod", Details: describeRequest(req, gpus) + ": " + noNIC.err.Error()})
	case placeErr != nil:
		return nil, placeErr
	case err != nil:
		return nil, s.allocError(err)
	}
	s.recordAllocation(leases, picks)
	plan := s.planOf(v, req.Sandbox, req.CNIIfName, req.Network, append(others, leases...))
	plan.Fresh = true
	annotatePlan(plan, picks)
	s.reportAttached(v.node.Machine, req, plan, gpus)
	return plan, nil
}

// place chooses the NICs given their use, names the interfaces and makes
// one lease request per pick. It runs under the allocator's lock: it must
// not call the allocator (pools are read from its immutable Pools).
func (s *Service) place(v *view, req api.AllocateRequest, pool string, input placement.Input, use placement.Use) ([]placement.Pick, []ipam.Request, error) {
	picks, err := v.node.Choose(input, use)
	if err != nil {
		return nil, nil, noNICError{err}
	}
	picks, names, err := s.interfaceNames(v.node, req, picks)
	if err != nil {
		return nil, nil, err
	}
	reqs, err := s.leaseRequests(v, req, pool, picks, names)
	return picks, reqs, err
}

func (s *Service) placementInput(v *view, req api.AllocateRequest, pool string, gpus []int) (placement.Input, error) {
	in := placement.Input{GPUs: gpus, Mode: req.Mode, NICs: req.Selector.NICs, Device: req.Selector.Device, Rail: req.Selector.Rail,
		LinkLayer: req.Selector.LinkLayer, MaxNICs: req.MaxNICs, VFPerGPU: req.Mode == api.ModeVF && s.vfPerGPU(req, v, pool)}
	if args := req.CNIArgs; args != nil {
		if len(args.NICs) > 0 {
			in.NICs = args.NICs
		}
		if args.Rail != nil {
			r := int(*args.Rail)
			in.Rail = &r
		}
	}
	in.MaxDistance, in.NICBounds = distanceBounds(v, req, pool)
	if pool != "" {
		bound, err := s.poolNICs(v, pool)
		if err != nil {
			return in, err
		}
		in.PoolNICs = bound
	}
	return in, nil
}

// leaseRequests builds one lease request per pick, each with its pool
// (the pool bound to the pick's NIC when the request names none), holding
// the pick's NIC.
func (s *Service) leaseRequests(v *view, req api.AllocateRequest, pool string, picks []placement.Pick, names []string) ([]ipam.Request, error) {
	reqs := make([]ipam.Request, 0, len(picks))
	for i, pick := range picks {
		p := pool
		if p == "" {
			var err error
			if p, err = v.boundPool(pick.NIC.Name); err != nil {
				return nil, err
			}
		}
		reqs = append(reqs, s.ipamRequest(req, names[i], p, []string{pick.NIC.Name}))
	}
	return reqs, nil
}

func (s *Service) ipamRequest(req api.AllocateRequest, ifname, pool string, nics []string) ipam.Request {
	return ipam.Request{Sandbox: req.Sandbox, IfName: ifname, CNIIfName: req.CNIIfName, Network: req.Network,
		Pool: pool, NICs: nics, Mode: string(req.Mode), PodNamespace: req.PodNamespace, PodName: req.PodName,
		PodUID: req.PodUID, Netns: req.Netns, PKey: req.PKey, PrimaryIf: req.PrimaryIfName, MAC: req.MAC}
}

// noNICError is placement finding no NIC (counted once the lock is gone).
type noNICError struct{ err error }

func (e noNICError) Error() string { return e.err.Error() }

// recordAllocation counts and logs new leases.
func (s *Service) recordAllocation(leases []ipam.Lease, picks []placement.Pick) {
	for _, l := range leases {
		if s.opt.Metrics != nil {
			s.opt.Metrics.Allocations.WithLabelValues(l.Pool, l.Mode).Inc()
		}
		attrs := []any{"sandbox", l.Sandbox, "ifname", l.IfName, "pod", podName(l.PodNamespace, l.PodName, ""),
			"pool", l.Pool, "address", l.Address.String(), "nics", l.NICs}
		if pick, ok := pickOf(picks, l); ok {
			class := placementClass(pick)
			attrs = append(attrs, "gpus", pick.GPUs, "distance", class, "reason", pick.Reason)
			if s.opt.Metrics != nil {
				s.opt.Metrics.Placements.WithLabelValues(pick.NIC.Name, class).Inc()
			}
		}
		s.log.Info("lease allocated", attrs...)
	}
}

// pickOf is the placement behind a lease, matched by its NIC (the
// allocator's answer need not keep the order of the picks; a vf-mode
// lease's NIC is its PF's, which its pick names).
func pickOf(picks []placement.Pick, l ipam.Lease) (placement.Pick, bool) {
	if len(l.NICs) == 0 {
		return placement.Pick{}, false
	}
	for _, p := range picks {
		if p.NIC.Name == l.NICs[0] {
			return p, true
		}
	}
	return placement.Pick{}, false
}

// placementClass is the class a placement is counted under: the closest
// class of its GPUs, or "none" for a NIC chosen without GPUs (the selector
// alone decided, so no distance was at stake).
func placementClass(p placement.Pick) string {
	if len(p.GPUs) == 0 {
		return "none"
	}
	return p.Class.String()
}

// allocError maps allocator errors to wire errors.
func (s *Service) allocError(err error) error {
	switch {
	case errors.Is(err, ipam.ErrExhausted):
		return s.countError("allocate", "pool_exhausted", &api.Error{Code: api.CodePoolExhausted, Msg: "pool exhausted", Details: err.Error()})
	case errors.Is(err, ipam.ErrLeaseConflict):
		return s.countError("allocate", "name_conflict", &api.Error{Code: api.CodeInvalidConfig, Msg: "invalid field \"ifPrefix\"",
			Details: err.Error() + "; two rail networks in one pod need different ifPrefix values (or different CNI_IFNAMEs alone)"})
	case errors.Is(err, ipam.ErrUnknownPool), errors.Is(err, ipam.ErrNoNodeSlice):
		return s.countError("allocate", "bad_pool", &api.Error{Code: api.CodeInvalidConfig, Msg: "invalid field \"pool\"", Details: err.Error()})
	case errors.Is(err, ipam.ErrDamaged):
		return s.countError("allocate", "store_damaged", &api.Error{Code: api.CodeIO, Msg: "lease store damaged", Details: err.Error()})
	default:
		return s.countError("allocate", "store", &api.Error{Code: api.CodeIO, Msg: "lease store", Details: err.Error()})
	}
}

func (s *Service) countError(op, reason string, err *api.Error) *api.Error {
	err = err.Bounded()
	if s.opt.Metrics != nil {
		s.opt.Metrics.Errors.WithLabelValues(op, reason).Inc()
	}
	s.log.Warn("request failed", "op", op, "reason", reason, "error", err.Error())
	return err
}

func describeRequest(req api.AllocateRequest, gpus []int) string {
	pod := podName(req.PodNamespace, req.PodName, "sandbox "+req.Sandbox)
	if len(gpus) == 0 {
		return fmt.Sprintf("pod %s (no GPUs known; mode %s)", pod, req.Mode)
	}
	parts := make([]string, len(gpus))
	for i, g := range gpus {
		parts[i] = fmt.Sprint(g)
	}
	return fmt.Sprintf("pod %s (GPUs %s; mode %s)", pod, strings.Join(parts, ","), req.Mode)
}

func attachKey(sandbox, ifname, network string) string { return sandbox + "/" + ifname + "/" + network }
