package nri

import (
	"reflect"
	"testing"
)

func TestResolveGPUIDs(t *testing.T) {
	p, _ := newTestPlugin(t, Config{GPUAutoInject: true, GPUAutoInjectNamespaces: []string{"*"}}, t.TempDir(), newFakeState())
	tests := []struct {
		ids     []string
		gpus    []int
		unknown []string
	}{
		{nil, nil, nil},
		{[]string{"0"}, []int{0}, nil},
		{[]string{"3", "1", "3"}, []int{3, 1}, nil},
		{[]string{"GPU-00000001-aaaa-bbbb-cccc-dddddddddddd"}, []int{1}, nil},
		{[]string{"gpu-00000001-AAAA-bbbb-cccc-dddddddddddd"}, []int{1}, nil},
		{[]string{"GPU-00000002-aaaa-bbbb-cccc-dddddddddddd::3"}, []int{2}, nil},
		{[]string{"MIG-GPU-00000002-aaaa-bbbb-cccc-dddddddddddd/1/0"}, []int{2}, nil},
		{[]string{"0:1", "0:2", "3:0"}, []int{0, 3}, nil},
		{[]string{"0000:22:00.0"}, []int{2}, nil},
		{[]string{"7"}, nil, []string{"7"}},
		{[]string{"all"}, nil, []string{"all"}},
		{[]string{"1", "GPU-ffffffff-0000-0000-0000-000000000000"}, []int{1}, []string{"GPU-ffffffff-0000-0000-0000-000000000000"}},
		{[]string{"MIG-5d8e6b4a-0000-0000-0000-000000000000"}, nil, []string{"MIG-5d8e6b4a-0000-0000-0000-000000000000"}},
	}
	for _, tt := range tests {
		gpus, unknown := p.tables().gpus.resolve(tt.ids)
		if !reflect.DeepEqual(gpus, tt.gpus) || !reflect.DeepEqual(unknown, tt.unknown) {
			t.Errorf("resolve(%q) = %v, %v; want %v, %v", tt.ids, gpus, unknown, tt.gpus, tt.unknown)
		}
	}
}

func TestCDIGPUs(t *testing.T) {
	tests := []struct {
		name    string
		kinds   []string
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
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := Config{GPUAutoInject: true, GPUAutoInjectNamespaces: []string{"*"}, GPUCDIKinds: tt.kinds}
			p, _ := newTestPlugin(t, cfg, t.TempDir(), newFakeState())
			call := p.begin(hookCreateContainer, pod("s1", "default", nil), withCDI(ctr("app"), tt.devices...))
			gpus, unknown := p.cdiGPUs(&call)
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
