package podinfo

import (
	"context"
	"fmt"
)

// DRASlices maps DRA devices to GPUs through the node's ResourceSlices
// (daemon/draslices implements it; this package stays free of client-go).
type DRASlices interface {
	// GPUID is an ID Resolver understands (PCI address or UUID) for a DRA
	// device. Errors wrap ErrDRANotSynced when a later call may succeed.
	GPUID(ctx context.Context, dev DRADevice) (string, error)
	// MIGParents maps MIG UUIDs the slices list to their parent GPU's UUID.
	MIGParents
}

// GPUDevices keeps the DRA devices of the given GPU drivers
// (DefaultDRADriver when none): other drivers' devices (NICs, ...) are
// not GPUs.
func GPUDevices(devices []DRADevice, drivers []string) []DRADevice {
	if len(drivers) == 0 {
		drivers = []string{DefaultDRADriver}
	}
	return ofDrivers(devices, drivers)
}

// ResolveDevices maps what the kubelet reports to GPU indices, each once,
// in the order reported (device-plugin IDs first): device-plugin IDs as
// every GPU ID (IDs), DRA devices (already narrowed to GPU drivers)
// through the slices. It returns every device it cannot map; nil slices
// (no API server) map no DRA device.
func (r Resolver) ResolveDevices(ctx context.Context, devices Devices, dra DRASlices) ([]int, []Unresolved) {
	gpus, failed := r.IDs(devices.IDs)
	for _, dev := range devices.DRA {
		found, err := r.resolveDRA(ctx, dev, dra)
		if err != nil {
			failed = append(failed, Unresolved{ID: dev.String(), Err: err})
			continue
		}
		gpus = appendNew(gpus, found...)
	}
	return gpus, failed
}

func (r Resolver) resolveDRA(ctx context.Context, dev DRADevice, dra DRASlices) ([]int, error) {
	if dra == nil {
		return nil, fmt.Errorf("DRA device %s (claim %s): raild has no API server connection to read the node's ResourceSlices; "+
			"give raild one (its kubernetes config)", dev, dev.Claim)
	}
	id, err := dra.GPUID(ctx, dev)
	if err != nil {
		return nil, err
	}
	found, err := r.Resolve([]string{id})
	if err != nil {
		return nil, fmt.Errorf("DRA device %s (claim %s), GPU %s by its ResourceSlice: %w", dev, dev.Claim, id, err)
	}
	return found, nil
}
