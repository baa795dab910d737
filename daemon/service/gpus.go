package service

import (
	"context"

	"github.com/railcni/rail/daemon/podinfo"
	"github.com/railcni/rail/pkg/api"
)

// resolveGPUs finds the pod's GPUs: cni-args gpus, else the rail.dev/gpus
// annotation, else the kubelet PodResources API, else none.
func (s *Service) resolveGPUs(ctx context.Context, req api.AllocateRequest) ([]int, error) {
	ids, source := s.gpuIDs(ctx, req)
	if ids == nil {
		if source != nil {
			return nil, source
		}
		return nil, nil
	}
	gpus, err := podinfo.ResolveGPUs(ids, s.gpuRefs())
	if err != nil {
		return nil, s.countError("allocate", "bad_gpus", &api.Error{Code: api.CodeInvalidConfig,
			Msg: "cannot resolve the pod's GPUs", Details: err.Error()})
	}
	return gpus, nil
}

// gpuIDs returns the raw GPU ids and, when the kubelet could not be asked, an error.
func (s *Service) gpuIDs(ctx context.Context, req api.AllocateRequest) ([]string, error) {
	if req.CNIArgs != nil && len(req.CNIArgs.GPUs) > 0 {
		return req.CNIArgs.GPUs, nil
	}
	if v := req.Annotations[api.AnnotationGPUs]; v != "" {
		return api.SplitList(v), nil
	}
	if s.opt.Pods == nil || req.PodName == "" {
		return nil, nil
	}
	ids, err := s.opt.Pods.PodDevices(ctx, req.PodNamespace, req.PodName, s.opt.GPUResources)
	if err != nil {
		return nil, s.countError("allocate", "podresources", &api.Error{Code: api.CodeTryAgainLater,
			Msg: "cannot ask the kubelet for the pod's GPUs", Details: err.Error()})
	}
	if len(ids) == 0 {
		return nil, nil
	}
	return ids, nil
}

func (s *Service) gpuRefs() []podinfo.GPURef {
	gpus := s.Machine().GPUs
	refs := make([]podinfo.GPURef, len(gpus))
	for i, g := range gpus {
		refs[i] = podinfo.GPURef{Index: g.Index, PCI: g.PCI, UUID: g.UUID}
	}
	return refs
}
