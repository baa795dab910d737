package service

import (
	"context"

	"github.com/railcni/rail/daemon/podinfo"
	"github.com/railcni/rail/pkg/api"
)

// holdDRANICs records the NICs a DRA NIC driver gave the pod being added,
// before the driver moves them (its NRI RunPodSandbox comes after the CNI
// ADD): this pod's own placement, and every other, leaves them alone.
func (s *Service) holdDRANICs(req api.AllocateRequest, given podinfo.Held) {
	if s.opt.DRAHeld == nil || len(given.NICs) == 0 || req.Sandbox == "" {
		return
	}
	s.opt.DRAHeld.Set(req.Sandbox, podinfo.PodDRANICs{Namespace: req.PodNamespace, Name: req.PodName, UID: req.PodUID,
		Netns: req.Netns, GPUs: given.GPUs, NICs: given.NICs})
}

// DRANICs is the typed list of RDMA ports DRA NIC drivers gave a sandbox's
// pod (device, port, netdev, PCI address, link layer, addresses): what the
// readiness checks and doctor read for such a pod.
func (s *Service) DRANICs(sandbox string) (podinfo.PodDRANICs, bool) {
	if s.opt.DRAHeld == nil {
		return podinfo.PodDRANICs{}, false
	}
	return s.opt.DRAHeld.Pod(sandbox)
}

// askDRANICs asks the kubelet what a pod that names its GPUs itself holds,
// only for its DRA NICs (best effort: a failure only loses the record,
// which the NRI plugin makes when the pod starts).
func (s *Service) askDRANICs(ctx context.Context, req api.AllocateRequest) {
	if s.opt.DRAHeld == nil || !s.opt.GPUs.AsksKubelet() || req.PodName == "" {
		return
	}
	given, err := s.opt.GPUs.PodGPUs(ctx, req.PodNamespace, req.PodName)
	if err != nil {
		s.log.Warn("cannot ask the kubelet for the pod's DRA NICs: placed without knowing them", "pod",
			podName(req.PodNamespace, req.PodName, req.Sandbox), "error", err)
		return
	}
	s.holdDRANICs(req, given)
}

// forgetDRANICs drops what a sandbox held through DRA NIC drivers: its CNI
// DEL means the pod is going (or its sandbox failed to start, and the NRI
// plugin may never hear of it), and the driver takes its NICs back.
func (s *Service) forgetDRANICs(sandbox string) {
	if s.opt.DRAHeld != nil {
		s.opt.DRAHeld.Forget(sandbox)
	}
}
