package podinfo

import (
	"context"

	"github.com/railcni/rail/pkg/topology"
)

// Kubelet is the kubelet's PodResources API as a GPUSource asks it
// (*Client implements it).
type Kubelet interface {
	// PodGPUs is what the pod's containers together hold: the device IDs of
	// the given resources and the DRA devices of its claims.
	PodGPUs(ctx context.Context, namespace, name string, resources []string) (Devices, error)
	// ContainerGPUs is PodGPUs per container.
	ContainerGPUs(ctx context.Context, namespace, name string, resources []string) (map[string]Devices, error)
}

// GPUSource tells which of the node's GPUs a pod or a container holds: the
// kubelet's PodResources API (device-plugin IDs and DRA devices), DRA
// devices mapped through the node's ResourceSlices, and every ID resolved
// against the node's GPUs as they are now. raild builds one at start; the
// service (ADD) and the NRI plugin (gpuAutoInject) both hold it.
type GPUSource struct {
	// Kubelet is the PodResources API; nil: the kubelet is not asked (GPUs
	// come from annotations, cni-args and CDI devices only).
	Kubelet Kubelet
	// Resources are the resource names whose device IDs are GPUs
	// (DefaultResource when empty).
	Resources []string
	// DRA maps DRA devices through the node's ResourceSlices; nil (no API
	// server): every DRA GPU is reported unresolved.
	DRA DRASlices
	// DRADrivers are the DRA drivers whose devices are GPUs
	// (DefaultDRADriver when empty).
	DRADrivers []string
	// NICDrivers are the DRA NIC drivers whose RDMA NICs raild completes
	// (memlock, env, readiness); none: DRA NICs are not read.
	NICDrivers []string
	// NICs reads those drivers' devices from the node's ResourceSlices;
	// nil (no API server): every DRA NIC is reported unresolved.
	NICs DRANICSlices
	// Machine is the node now (the inventory's current snapshot).
	Machine func() *topology.Machine
}

// Held is what the kubelet says a pod or a container holds, mapped to the
// node's GPUs: each GPU once, in the kubelet's order, and every device
// that maps to none with the reason.
type Held struct {
	GPUs       []int
	Unresolved []Unresolved
	// NICs are the RDMA ports the NIC drivers' claims gave (NICDrivers);
	// NICErrors the NIC devices that did not resolve, with why.
	NICs      []DRANIC
	NICErrors []Unresolved
}

// Any tells whether the kubelet reported any GPU device at all (resolved
// or not).
func (h Held) Any() bool { return len(h.GPUs) > 0 || len(h.Unresolved) > 0 }

// AsksKubelet tells whether the source has the kubelet to ask (a nil
// source has not).
func (s *GPUSource) AsksKubelet() bool { return s != nil && s.Kubelet != nil }

// PodGPUs asks the kubelet what the pod holds and maps it to GPUs.
func (s *GPUSource) PodGPUs(ctx context.Context, namespace, name string) (Held, error) {
	devices, err := s.Kubelet.PodGPUs(ctx, namespace, name, s.Resources)
	if err != nil {
		return Held{}, err
	}
	return s.resolve(ctx, devices), nil
}

// ContainerGPUs is PodGPUs per container name; containers the kubelet
// reports neither a GPU device nor a DRA NIC for are left out.
func (s *GPUSource) ContainerGPUs(ctx context.Context, namespace, name string) (map[string]Held, error) {
	byCtr, err := s.Kubelet.ContainerGPUs(ctx, namespace, name, s.Resources)
	if err != nil {
		return nil, err
	}
	out := make(map[string]Held, len(byCtr))
	for ctr, devices := range byCtr {
		if held := s.resolve(ctx, devices); held.Any() || len(held.NICs) > 0 || len(held.NICErrors) > 0 {
			out[ctr] = held
		}
	}
	return out, nil
}

// resolve keeps the GPU drivers' DRA devices and maps everything to the
// node's GPUs now; the NIC drivers' devices map to the node's RDMA ports.
func (s *GPUSource) resolve(ctx context.Context, devices Devices) Held {
	var held Held
	if nicDevs := NICDevices(devices.DRA, s.NICDrivers); len(nicDevs) > 0 {
		held.NICs, held.NICErrors = ResolveNICs(ctx, s.Machine(), nicDevs, s.NICs)
	}
	devices.DRA = GPUDevices(devices.DRA, s.DRADrivers)
	if devices.Empty() {
		return held
	}
	held.GPUs, held.Unresolved = s.Resolver(s.Machine()).ResolveDevices(ctx, devices, s.DRA)
	return held
}

// Resolver is the node's one GPU-ID resolver for the machine m: IDs
// against m's GPUs (the one place the topology's GPUs become GPURefs),
// modern MIG UUIDs through the node's ResourceSlices when the source has
// them. The service's explicit GPUs (cni-args, rail.dev/gpus), NRI's CDI
// devices and the kubelet's device-plugin IDs all resolve through it. A
// nil source resolves against m alone.
func (s *GPUSource) Resolver(m *topology.Machine) Resolver {
	refs := make([]GPURef, len(m.GPUs))
	for i, g := range m.GPUs {
		refs[i] = GPURef{Index: g.Index, PCI: g.PCI, UUID: g.UUID}
	}
	r := Resolver{GPUs: refs}
	if s != nil && s.DRA != nil {
		r.MIG = s.DRA
	}
	return r
}
