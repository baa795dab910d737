package service

import (
	"context"
	"slices"

	"github.com/railcni/rail/pkg/api"
)

// resolveGPUs finds the pod's GPUs: cni-args gpus, else the rail.dev/gpus
// annotation, else what the kubelet's PodResources API reports (device
// plugin IDs and DRA devices), else none. held tells whether the pod holds
// GPUs at all, even when unresolvedGPUs: ignore dropped every one of them.
// pool is the attachment's explicit pool ("" when none), whose
// unresolvedGPUs applies when the netconf sets none.
func (s *Service) resolveGPUs(ctx context.Context, req api.AllocateRequest, v *view, pool string) (gpus []int, held bool, err error) {
	ids, where, err := explicitGPUs(req)
	if err != nil {
		return nil, true, s.countError("allocate", "bad_gpus", &api.Error{Code: api.CodeInvalidConfig,
			Msg: "cannot read the GPUs named by " + where, Details: err.Error()})
	}
	if len(ids) > 0 {
		s.askDRANICs(ctx, req)
		gpus, err := s.opt.GPUs.Resolver(s.Machine()).Resolve(ids)
		if err != nil {
			return nil, true, s.countError("allocate", "bad_gpus", &api.Error{Code: api.CodeInvalidConfig,
				Msg: "cannot resolve the GPUs named by " + where, Details: err.Error()})
		}
		return gpus, true, nil
	}
	if !s.opt.GPUs.AsksKubelet() || req.PodName == "" {
		return nil, false, nil
	}
	given, err := s.opt.GPUs.PodGPUs(ctx, req.PodNamespace, req.PodName)
	if err != nil {
		return nil, false, s.countError("allocate", "podresources", &api.Error{Code: api.CodeTryAgainLater,
			Msg: "cannot ask the kubelet for the pod's GPUs", Details: err.Error()})
	}
	s.holdDRANICs(req, given)
	if !given.Any() {
		return nil, false, nil
	}
	gpus = slices.Sorted(slices.Values(given.GPUs))
	failed := unresolvedGPUs(given.Unresolved)
	if len(failed) == 0 {
		return gpus, true, nil
	}
	if unresolvedPolicy(req, v, pool) == api.UnresolvedGPUsIgnore {
		s.log.Warn("GPUs the kubelet reports are not resolved: placed without them (unresolvedGPUs: ignore)",
			"pod", podName(req.PodNamespace, req.PodName, req.Sandbox), "gpus", gpus, "unresolved", failed.ids(), "why", failed.join())
		return gpus, true, nil
	}
	return nil, true, s.unresolvedError(req, failed)
}

// explicitGPUs are the GPU IDs the pod names itself, and where; an
// annotation with an empty entry ("0,,1") is refused.
func explicitGPUs(req api.AllocateRequest) ([]string, string, error) {
	if req.CNIArgs != nil && len(req.CNIArgs.GPUs) > 0 {
		return req.CNIArgs.GPUs, "cni-args gpus", nil
	}
	if v := req.Annotations[api.AnnotationGPUs]; v != "" {
		where := "the " + api.AnnotationGPUs + " annotation"
		ids, err := api.SplitList(v)
		return ids, where, err
	}
	return nil, "", nil
}

// unresolvedPolicy is the attachment's unresolvedGPUs: the netconf's, else
// the explicit pool's, else fail.
func unresolvedPolicy(req api.AllocateRequest, v *view, pool string) string {
	if req.UnresolvedGPUs != "" {
		return req.UnresolvedGPUs
	}
	if p, ok := v.get(pool); ok && pool != "" && p.Config.UnresolvedGPUs != "" {
		return p.Config.UnresolvedGPUs
	}
	return api.UnresolvedGPUsFail
}
