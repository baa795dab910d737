package service

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/railcni/rail/daemon/podinfo"
	"github.com/railcni/rail/pkg/api"
)

// unresolvedGPUs are the GPUs the kubelet reports that raild cannot map.
type unresolvedGPUs []podinfo.Unresolved

func (u unresolvedGPUs) ids() []string {
	out := make([]string, len(u))
	for i, one := range u {
		out[i] = one.ID
	}
	return out
}

func (u unresolvedGPUs) join() string {
	parts := make([]string, len(u))
	for i, one := range u {
		parts[i] = one.Err.Error()
	}
	return strings.Join(parts, "; ")
}

// mayCatchUp tells whether a later ADD may resolve them (slices not synced).
func (u unresolvedGPUs) mayCatchUp() bool {
	return slices.ContainsFunc(u, func(one podinfo.Unresolved) bool { return errors.Is(one.Err, podinfo.ErrDRANotSynced) })
}

// unresolvedError is the ADD failure for GPUs that cannot be resolved:
// code 11 when the slices may catch up, else 7; it names every ID and
// the ways out.
func (s *Service) unresolvedError(req api.AllocateRequest, failed unresolvedGPUs) error {
	code, reason := uint(api.CodeInvalidConfig), "unresolved_gpus"
	if failed.mayCatchUp() {
		code, reason = api.CodeTryAgainLater, "dra_not_synced"
	}
	return s.countError("allocate", reason, &api.Error{Code: code,
		Msg: fmt.Sprintf("cannot resolve the GPUs the kubelet reports for pod %s: %s",
			podName(req.PodNamespace, req.PodName, req.Sandbox), strings.Join(failed.ids(), ", ")),
		Details: failed.join() + fmt.Sprintf("; to place the pod anyway, name its GPUs with the %s annotation "+
			"(indices or GPU UUIDs), or set unresolvedGPUs: %s in the netconf or the pool to place it without them",
			api.AnnotationGPUs, api.UnresolvedGPUsIgnore)})
}
