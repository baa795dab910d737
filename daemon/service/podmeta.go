package service

import (
	"context"

	"github.com/railcni/rail/pkg/api"
)

// PodMeta gives a pod's annotations from the cluster when the runtime
// passed none (Multus forwards only cni-args; some runtimes pass nothing).
// uid, when not empty, must match: a pod recreated under the same name
// must not lend its annotations. The error names the pod and why it is
// unknown (raild's pod informer in production).
type PodMeta interface {
	PodAnnotations(ctx context.Context, namespace, name, uid string) (map[string]string, error)
}

// withPodAnnotations fills req.Annotations from PodMeta when the runtime
// passed none (nil; an empty map is the runtime saying "none"). Without a
// PodMeta, or for a request that names no pod, req is returned as is.
func (s *Service) withPodAnnotations(ctx context.Context, req api.AllocateRequest) (api.AllocateRequest, error) {
	if req.Annotations != nil || s.opt.PodMeta == nil || req.PodName == "" {
		return req, nil
	}
	annotations, err := s.opt.PodMeta.PodAnnotations(ctx, req.PodNamespace, req.PodName, req.PodUID)
	if err != nil {
		return req, s.countError("allocate", "pod_unknown", &api.Error{Code: api.CodeTryAgainLater,
			Msg: "pod annotations unavailable", Details: err.Error()})
	}
	req.Annotations = annotations
	return req, nil
}
