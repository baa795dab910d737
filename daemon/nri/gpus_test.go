package nri

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/railcni/rail/daemon/podinfo"
)

// migParents is a node whose ResourceSlices list MIG devices: MIG UUID ->
// parent GPU UUID.
type migParents map[string]string

func (m migParents) GPUID(_ context.Context, dev podinfo.DRADevice) (string, error) {
	return "", fmt.Errorf("DRA device %s: %w", dev, podinfo.ErrDRAUnknownDevice)
}

func (m migParents) MIGParents() map[string]string { return m }

// TestCDIGPUs: CDI device names through the node's GPU resolver (every ID
// shape is podinfo's TestGPUSourceResolver).
func TestCDIGPUs(t *testing.T) {
	const mig = "MIG-5d8e6b4a-0000-0000-0000-000000000000"
	withSlices := &podinfo.GPUSource{DRA: migParents{mig: "GPU-00000002-aaaa-bbbb-cccc-dddddddddddd"}}
	tests := []struct {
		name    string
		kinds   []string
		source  *podinfo.GPUSource
		devices []string
		gpus    []int
		unknown []string
	}{
		{name: "none"},
		{name: "index and UUID of the default kinds",
			devices: []string{"nvidia.com/gpu=1", "k8s.device-plugin.nvidia.com/gpu=GPU-00000003-aaaa-bbbb-cccc-dddddddddddd"},
			gpus:    []int{1, 3}},
		{name: "all", devices: []string{"nvidia.com/gpu=all"}, gpus: []int{0, 1, 2, 3}},
		{name: "MIG device by index", devices: []string{"nvidia.com/gpu=2:0"}, gpus: []int{2}},
		{name: "other kinds ignored", devices: []string{"vendor.com/fpga=0", "nvidia.com/gpu", "nvidia.com/gpus=1"}},
		{name: "GPU kind naming no GPU of this node", devices: []string{"nvidia.com/gpu=9", "nvidia.com/gpu=0"},
			gpus: []int{0}, unknown: []string{"9"}},
		{name: "configured kind only", kinds: []string{"example.com/accel"},
			devices: []string{"nvidia.com/gpu=1", "example.com/accel=2"}, gpus: []int{2}},
		{name: "UUID with a replica, PCI address, legacy MIG", devices: []string{"nvidia.com/gpu=GPU-00000002-aaaa-bbbb-cccc-dddddddddddd::3",
			"nvidia.com/gpu=0000:21:00.0", "nvidia.com/gpu=MIG-GPU-00000003-aaaa-bbbb-cccc-dddddddddddd/1/0"}, gpus: []int{2, 1, 3}},
		// the ADD resolved a MIG UUID through the slices; the hook's
		// resolver had no slices and left the container without its NIC
		{name: "MIG UUID through the node's slices", source: withSlices, devices: []string{"nvidia.com/gpu=" + mig}, gpus: []int{2}},
		{name: "MIG UUID without slices", devices: []string{"nvidia.com/gpu=" + mig}, unknown: []string{mig}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := Config{GPUAutoInject: true, GPUAutoInjectNamespaces: []string{"*"}, GPUCDIKinds: tt.kinds}
			p, _ := newKubeletPlugin(t, cfg, t.TempDir(), newFakeState(), tt.source)
			call := p.begin(hookCreateContainer, pod("s1", "default", nil), withCDI(ctr("app"), tt.devices...))
			gpus, failed := p.cdiGPUs(&call)
			var unknown []string
			for _, f := range failed {
				unknown = append(unknown, f.ID)
			}
			if !reflect.DeepEqual(gpus, tt.gpus) || !reflect.DeepEqual(unknown, tt.unknown) {
				t.Errorf("cdiGPUs(%q) = %v, %v; want %v, %v", tt.devices, gpus, unknown, tt.gpus, tt.unknown)
			}
		})
	}
}

// TestGPUAffinity: each GPU of the fixture shares a switch with one NIC.
func TestGPUAffinity(t *testing.T) {
	p, _ := newTestPlugin(t, Config{GPUAutoInject: true, GPUAutoInjectNamespaces: []string{"*"}}, t.TempDir(), newFakeState())
	want := map[int]string{0: "mlx5_0", 1: "mlx5_1", 2: "mlx5_2", 3: "mlx5_3"}
	if !reflect.DeepEqual(p.tables().gpus.nics, want) {
		t.Fatalf("affinity %v, want %v", p.tables().gpus.nics, want)
	}
}
