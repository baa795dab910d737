package service

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/railcni/rail/daemon/podinfo"
	"github.com/railcni/rail/pkg/api"
)

// DRASlices resolves DRA devices through the node's ResourceSlices
// (daemon/draslices; the service itself stays free of client-go).
type DRASlices interface {
	// GPUID is an ID podinfo.Resolver understands (PCI address or UUID)
	// for a DRA device. Errors wrap podinfo.ErrDRANotSynced when a later
	// call may succeed.
	GPUID(ctx context.Context, dev podinfo.DRADevice) (string, error)
	// MIGParents maps MIG UUIDs the slices list to their parent GPU's UUID.
	MIGParents() map[string]string
}

// unresolvedGPU is one GPU the kubelet reports that raild cannot map.
type unresolvedGPU struct {
	id  string // the device-plugin ID or the DRA triple
	err error
}

type unresolvedGPUs []unresolvedGPU

func (u unresolvedGPUs) ids() []string {
	out := make([]string, len(u))
	for i, one := range u {
		out[i] = one.id
	}
	return out
}

func (u unresolvedGPUs) join() string {
	parts := make([]string, len(u))
	for i, one := range u {
		parts[i] = one.err.Error()
	}
	return strings.Join(parts, "; ")
}

// mayCatchUp tells whether a later ADD may resolve them (slices not synced).
func (u unresolvedGPUs) mayCatchUp() bool {
	return slices.ContainsFunc(u, func(one unresolvedGPU) bool { return errors.Is(one.err, podinfo.ErrDRANotSynced) })
}

// gpuDRADevices keeps the devices of the DRA drivers whose devices are GPUs.
func (s *Service) gpuDRADevices(devices []podinfo.DRADevice) []podinfo.DRADevice {
	drivers := s.opt.GPUDRADrivers
	if len(drivers) == 0 {
		drivers = []string{podinfo.DefaultDRADriver}
	}
	var out []podinfo.DRADevice
	for _, d := range devices {
		if slices.Contains(drivers, d.Driver) {
			out = append(out, d)
		}
	}
	return out
}

// resolveKubeletGPUs maps every device-plugin ID and DRA device to GPU
// indices (ascending, each once) and returns those it cannot map.
func (s *Service) resolveKubeletGPUs(ctx context.Context, devices podinfo.Devices) ([]int, unresolvedGPUs) {
	resolver := podinfo.Resolver{GPUs: s.gpuRefs()}
	if s.opt.DRA != nil {
		resolver.MIGParents = s.opt.DRA.MIGParents()
	}
	var gpus []int
	var failed unresolvedGPUs
	for _, id := range devices.IDs {
		found, err := resolver.Resolve([]string{id})
		if err != nil {
			failed = append(failed, unresolvedGPU{id: id, err: err})
			continue
		}
		gpus = append(gpus, found...)
	}
	for _, dev := range devices.DRA {
		found, err := s.resolveDRA(ctx, resolver, dev)
		if err != nil {
			failed = append(failed, unresolvedGPU{id: dev.String(), err: err})
			continue
		}
		gpus = append(gpus, found...)
	}
	slices.Sort(gpus)
	return slices.Compact(gpus), failed
}

func (s *Service) resolveDRA(ctx context.Context, resolver podinfo.Resolver, dev podinfo.DRADevice) ([]int, error) {
	if s.opt.DRA == nil {
		return nil, fmt.Errorf("DRA device %s (claim %s): raild has no API server connection to read the node's ResourceSlices; "+
			"give raild one (its kubernetes config)", dev, dev.Claim)
	}
	id, err := s.opt.DRA.GPUID(ctx, dev)
	if err != nil {
		return nil, err
	}
	found, err := resolver.Resolve([]string{id})
	if err != nil {
		return nil, fmt.Errorf("DRA device %s (claim %s), GPU %s by its ResourceSlice: %w", dev, dev.Claim, id, err)
	}
	return found, nil
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
