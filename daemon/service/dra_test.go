package service

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/railcni/rail/daemon/podinfo"
	"github.com/railcni/rail/ipam"
	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

// fakeKubelet answers PodGPUs from a table: "ns/name" -> devices.
type fakeKubelet map[string]podinfo.Devices

func (f fakeKubelet) PodGPUs(_ context.Context, ns, name string, _ []string) (podinfo.Devices, error) {
	return f[ns+"/"+name], nil
}

// fakeDRA stands in for the node's ResourceSlices: triple -> GPU id.
type fakeDRA struct {
	ids       map[string]string
	notSynced bool
	migs      map[string]string
}

func (f fakeDRA) GPUID(_ context.Context, dev podinfo.DRADevice) (string, error) {
	if f.notSynced {
		return "", fmt.Errorf("DRA device %s: %w: last error: forbidden", dev, podinfo.ErrDRANotSynced)
	}
	id, ok := f.ids[dev.String()]
	if !ok {
		return "", fmt.Errorf("DRA device %s: %w", dev, podinfo.ErrDRAUnknownDevice)
	}
	return id, nil
}

func (f fakeDRA) MIGParents() map[string]string { return f.migs }

func gpuDev(name string) podinfo.DRADevice {
	return podinfo.DRADevice{Driver: podinfo.DefaultDRADriver, Pool: "node1", Device: name, Claim: "default/gpus"}
}

// nvidiaSMIPCI writes a PCI address the way NVIDIA's driver publishes it.
func nvidiaSMIPCI(pci string) string { return "0000" + strings.ToUpper(pci) }

func TestGPUsFromDRA(t *testing.T) {
	spec, err := fakesys.Write(t.TempDir(), "h100x8-cx7x4", fakesys.Options{})
	if err != nil {
		t.Fatal(err)
	}
	const migUUID = "MIG-6f1c3b1e-0d7a-5c8e-9a3b-2f4d5e6a7b8c"
	slices := fakeDRA{ids: map[string]string{
		"gpu.nvidia.com/node1/gpu-4":     nvidiaSMIPCI(spec.GPUs[4].PCI),
		"gpu.nvidia.com/node1/gpu-5":     spec.GPUs[5].UUID,
		"gpu.nvidia.com/node1/gpu-ghost": "0000:ee:00.0",
	}, migs: map[string]string{migUUID: spec.GPUs[2].UUID}}
	nicDev := podinfo.DRADevice{Driver: "dra.net", Pool: "node1", Device: "eth1", Claim: "default/nic"}
	ignorePool := []ipam.PoolConfig{{Name: "rail", Subnet: "10.77.0.0/24", UnresolvedGPUs: api.UnresolvedGPUsIgnore}}
	tests := []struct {
		name       string
		devices    podinfo.Devices
		annotation string            // the pod's rail.dev/gpus ("": none)
		dra        podinfo.DRASlices // nil: raild without an API server
		pools      []ipam.PoolConfig
		netconf    string // the request's unresolvedGPUs
		explicit   bool   // the request names the pool
		wantGPUs   string
		wantNIC    string
		wantPass   bool
		wantCode   uint
		wantInText []string
	}{
		{name: "DRA GPUs by PCI address and UUID", devices: podinfo.Devices{DRA: []podinfo.DRADevice{gpuDev("gpu-4"), gpuDev("gpu-5")}},
			dra: slices, wantGPUs: "[4 5]", wantNIC: "rail0=mlx5_2"},
		{name: "device plugin and DRA together", devices: podinfo.Devices{IDs: []string{spec.GPUs[4].UUID}, DRA: []podinfo.DRADevice{gpuDev("gpu-5")}},
			dra: slices, wantGPUs: "[4 5]"},
		{name: "a NIC driver's device is no GPU", devices: podinfo.Devices{DRA: []podinfo.DRADevice{nicDev}}, dra: slices, wantPass: true},
		{name: "legacy MIG id", devices: podinfo.Devices{IDs: []string{"MIG-" + spec.GPUs[3].UUID + "/7/0"}}, dra: slices, wantGPUs: "[3]"},
		{name: "modern MIG id through the slices' MIG devices", devices: podinfo.Devices{IDs: []string{migUUID}}, dra: slices, wantGPUs: "[2]"},
		// the kubelet's MIG UUID resolved through the slices, the same ID
		// named by the pod did not: the ADD's resolver had no slices
		{name: "modern MIG id in rail.dev/gpus through the slices", annotation: migUUID + ", 2", dra: slices, wantGPUs: "[2]"},
		{name: "modern MIG id in rail.dev/gpus without slices fails", annotation: migUUID,
			wantCode: api.CodeInvalidConfig, wantInText: []string{migUUID, "parentUUID"}},
		{name: "modern MIG id without slices fails", devices: podinfo.Devices{IDs: []string{migUUID}},
			wantCode: api.CodeInvalidConfig, wantInText: []string{migUUID, "rail.dev/gpus", "unresolvedGPUs: ignore", "parentUUID"}},
		{name: "DRA without an API server fails", devices: podinfo.Devices{DRA: []podinfo.DRADevice{gpuDev("gpu-4")}},
			wantCode: api.CodeInvalidConfig, wantInText: []string{"gpu.nvidia.com/node1/gpu-4", "default/gpus", "no API server connection"}},
		{name: "DRA device in no slice fails", devices: podinfo.Devices{DRA: []podinfo.DRADevice{gpuDev("gpu-4"), gpuDev("gpu-9")}}, dra: slices,
			wantCode: api.CodeInvalidConfig, wantInText: []string{"gpu.nvidia.com/node1/gpu-9", "not in any ResourceSlice"}},
		{name: "slices not synced: try again later", devices: podinfo.Devices{DRA: []podinfo.DRADevice{gpuDev("gpu-4")}}, dra: fakeDRA{notSynced: true},
			wantCode: api.CodeTryAgainLater, wantInText: []string{"gpu.nvidia.com/node1/gpu-4", "forbidden"}},
		{name: "slice names a GPU this node lacks", devices: podinfo.Devices{DRA: []podinfo.DRADevice{gpuDev("gpu-ghost")}}, dra: slices,
			wantCode: api.CodeInvalidConfig, wantInText: []string{"gpu.nvidia.com/node1/gpu-ghost", "0000:ee:00.0"}},
		{name: "netconf ignore keeps the GPUs that resolve", devices: podinfo.Devices{DRA: []podinfo.DRADevice{gpuDev("gpu-4"), gpuDev("gpu-9")}},
			dra: slices, netconf: api.UnresolvedGPUsIgnore, wantGPUs: "[4]", wantNIC: "rail0=mlx5_2"},
		{name: "pool ignore: placed without GPUs, not passed through", devices: podinfo.Devices{IDs: []string{migUUID}},
			pools: ignorePool, explicit: true, wantGPUs: "[]"},
		{name: "pool ignore applies only to a named pool", devices: podinfo.Devices{IDs: []string{migUUID}},
			pools: ignorePool, wantCode: api.CodeInvalidConfig},
		{name: "netconf fail overrides the pool's ignore", devices: podinfo.Devices{IDs: []string{migUUID}},
			pools: ignorePool, explicit: true, netconf: api.UnresolvedGPUsFail, wantCode: api.CodeInvalidConfig},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pools := tt.pools
			if pools == nil {
				pools = onePool()
			}
			svc, _ := newService(t, "h100x8-cx7x4", pools, fakeKubelet{"default/pod-x": tt.devices}, func(o *Options) {
				if tt.dra != nil {
					o.GPUs.DRA = tt.dra
				}
			})
			req := allocReq(fmt.Sprintf("sb%d", i), "")
			req.Annotations, req.PodName, req.UnresolvedGPUs = nil, "pod-x", tt.netconf
			if tt.annotation != "" {
				req.Annotations = map[string]string{api.AnnotationGPUs: tt.annotation}
			}
			if tt.explicit {
				req.Pool = "rail"
			}
			plan, err := svc.Allocate(context.Background(), req)
			if tt.wantCode != 0 {
				checkAPIError(t, err, tt.wantCode, tt.wantInText)
				return
			}
			if err != nil {
				t.Fatalf("Allocate: %v", err)
			}
			if plan.PassThrough != tt.wantPass {
				t.Fatalf("pass-through = %v (%s), want %v", plan.PassThrough, plan.Reason, tt.wantPass)
			}
			if tt.wantPass {
				return
			}
			if got := fmt.Sprint(plan.Interfaces[0].GPUs); got != tt.wantGPUs && !(tt.wantGPUs == "[]" && plan.Interfaces[0].GPUs == nil) {
				t.Errorf("GPUs = %s, want %s", got, tt.wantGPUs)
			}
			if nics := nicsOf(plan); tt.wantNIC != "" && (len(nics) != 1 || nics[0] != tt.wantNIC) {
				t.Errorf("NICs = %v, want %s", nics, tt.wantNIC)
			}
		})
	}
}

func checkAPIError(t *testing.T, err error, code uint, parts []string) {
	t.Helper()
	if !api.IsCode(err, code) {
		t.Fatalf("Allocate error = %v; want code %d", err, code)
	}
	for _, part := range parts {
		if !strings.Contains(err.Error(), part) {
			t.Errorf("error %q does not name %q", err, part)
		}
	}
}

func TestValidateUnresolvedGPUs(t *testing.T) {
	req := api.AllocateRequest{Sandbox: "abc", CNIIfName: "eth0", Network: "n", Mode: api.ModeMove, UnresolvedGPUs: "skip"}
	err := ValidateAllocate(req)
	if !api.IsCode(err, api.CodeInvalidConfig) || !strings.Contains(err.Error(), `"unresolvedGPUs"`) {
		t.Fatalf("ValidateAllocate = %v; want an error naming unresolvedGPUs", err)
	}
}
