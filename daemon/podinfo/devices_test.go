package podinfo_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/railcni/rail/daemon/podinfo"
)

// sliceTable stands in for the node's ResourceSlices: triple -> GPU id.
type sliceTable struct {
	ids  map[string]string
	migs map[string]string
}

func (s sliceTable) GPUID(_ context.Context, dev podinfo.DRADevice) (string, error) {
	if id, ok := s.ids[dev.String()]; ok {
		return id, nil
	}
	return "", fmt.Errorf("DRA device %s: %w", dev, podinfo.ErrDRAUnknownDevice)
}

func (s sliceTable) MIGParents() map[string]string { return s.migs }

func TestResolveDevices(t *testing.T) {
	gpus := []podinfo.GPURef{{Index: 0, PCI: "0000:17:00.0", UUID: "GPU-aaaa"}, {Index: 1, PCI: "0000:3a:00.0", UUID: "GPU-bbbb"}}
	slices := sliceTable{ids: map[string]string{"gpu.nvidia.com/n1/gpu-0": "00000000:17:00.0", "gpu.nvidia.com/n1/gpu-1": "GPU-bbbb",
		"gpu.nvidia.com/n1/gpu-x": "0000:99:00.0"}, migs: map[string]string{"MIG-cccc": "GPU-bbbb"}}
	dra := func(names ...string) []podinfo.DRADevice {
		var out []podinfo.DRADevice
		for _, n := range names {
			out = append(out, podinfo.DRADevice{Driver: podinfo.DefaultDRADriver, Pool: "n1", Device: n, Claim: "ns/c"})
		}
		return out
	}
	tests := []struct {
		name       string
		devices    podinfo.Devices
		slices     podinfo.DRASlices
		want       []int
		wantFailed []string // IDs, each with its reason naming it
	}{
		{name: "DRA by PCI and UUID, in the kubelet's order", devices: podinfo.Devices{DRA: dra("gpu-1", "gpu-0")}, slices: slices, want: []int{1, 0}},
		{name: "both kinds, each GPU once", devices: podinfo.Devices{IDs: []string{"GPU-aaaa", "1"}, DRA: dra("gpu-0")}, slices: slices, want: []int{0, 1}},
		{name: "modern MIG through the slices", devices: podinfo.Devices{IDs: []string{"MIG-cccc"}}, slices: slices, want: []int{1}},
		{name: "modern MIG without slices", devices: podinfo.Devices{IDs: []string{"MIG-cccc"}}, wantFailed: []string{"MIG-cccc"}},
		{name: "DRA without slices", devices: podinfo.Devices{IDs: []string{"0"}, DRA: dra("gpu-1")}, want: []int{0},
			wantFailed: []string{"gpu.nvidia.com/n1/gpu-1"}},
		{name: "unknown device and a GPU not on the node", devices: podinfo.Devices{DRA: dra("gpu-9", "gpu-x", "gpu-1")}, slices: slices,
			want: []int{1}, wantFailed: []string{"gpu.nvidia.com/n1/gpu-9", "gpu.nvidia.com/n1/gpu-x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, failed := podinfo.Resolver{GPUs: gpus, MIG: tt.slices}.ResolveDevices(context.Background(), tt.devices, tt.slices)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("GPUs = %v, want %v", got, tt.want)
			}
			var ids []string
			for _, f := range failed {
				ids = append(ids, f.ID)
				if !strings.Contains(f.Err.Error(), f.ID) {
					t.Errorf("reason %q does not name %s", f.Err, f.ID)
				}
			}
			if !reflect.DeepEqual(ids, tt.wantFailed) {
				t.Errorf("unresolved = %v, want %v", ids, tt.wantFailed)
			}
		})
	}
	if _, failed := (podinfo.Resolver{GPUs: gpus}).ResolveDevices(context.Background(), podinfo.Devices{DRA: dra("gpu-9")}, slices); !errors.Is(failed[0].Err, podinfo.ErrDRAUnknownDevice) {
		t.Errorf("unknown device error %v does not wrap ErrDRAUnknownDevice", failed[0].Err)
	}
}

func TestGPUDevices(t *testing.T) {
	devs := []podinfo.DRADevice{{Driver: "gpu.nvidia.com", Device: "a"}, {Driver: "dra.net", Device: "b"}, {Driver: "gpu.example.com", Device: "c"}}
	tests := []struct {
		drivers []string
		want    string
	}{
		{nil, "a"},
		{[]string{"gpu.example.com", "gpu.nvidia.com"}, "a,c"},
		{[]string{"other"}, ""},
	}
	for _, tt := range tests {
		var names []string
		for _, d := range podinfo.GPUDevices(devs, tt.drivers) {
			names = append(names, d.Device)
		}
		if got := strings.Join(names, ","); got != tt.want {
			t.Errorf("GPUDevices(%v) = %s, want %s", tt.drivers, got, tt.want)
		}
	}
}
