package nri

import (
	"reflect"
	"testing"
)

func TestParseVisibleDevices(t *testing.T) {
	m := testMachine(t.TempDir())
	all := []int{0, 1, 2, 3}
	tests := []struct {
		value   string
		gpus    []int
		unknown []string
	}{
		{"", nil, nil},
		{"none", nil, nil},
		{"void", nil, nil},
		{"all", all, nil},
		{"0", []int{0}, nil},
		{"3,1", []int{3, 1}, nil},
		{" 2 , 2 ,", []int{2}, nil},
		{"GPU-00000001-aaaa-bbbb-cccc-dddddddddddd", []int{1}, nil},
		{"gpu-00000001-AAAA-bbbb-cccc-dddddddddddd", []int{1}, nil},
		{"MIG-GPU-00000002-aaaa-bbbb-cccc-dddddddddddd/1/0", []int{2}, nil},
		{"0:1,0:2,3:0", []int{0, 3}, nil},
		{"7", nil, []string{"7"}},
		{"1,GPU-ffffffff-0000-0000-0000-000000000000", []int{1}, []string{"GPU-ffffffff-0000-0000-0000-000000000000"}},
		{"MIG-5d8e6b4a-0000-0000-0000-000000000000", nil, []string{"MIG-5d8e6b4a-0000-0000-0000-000000000000"}},
	}
	for _, tt := range tests {
		gpus, unknown := parseVisibleDevices(m, all, tt.value)
		if !reflect.DeepEqual(gpus, tt.gpus) || !reflect.DeepEqual(unknown, tt.unknown) {
			t.Errorf("parseVisibleDevices(%q) = %v, %v; want %v, %v", tt.value, gpus, unknown, tt.gpus, tt.unknown)
		}
	}
}

func TestLastEnv(t *testing.T) {
	tests := []struct {
		env   []string
		value string
		ok    bool
	}{
		{nil, "", false},
		{[]string{"NVIDIA_VISIBLE_DEVICES_X=1"}, "", false},
		{[]string{"NVIDIA_VISIBLE_DEVICES="}, "", true},
		{[]string{"NVIDIA_VISIBLE_DEVICES=0", "A=b", "NVIDIA_VISIBLE_DEVICES=all"}, "all", true},
	}
	for _, tt := range tests {
		v, ok := lastEnv(tt.env, visibleDevicesEnv)
		if v != tt.value || ok != tt.ok {
			t.Errorf("lastEnv(%q) = %q, %v; want %q, %v", tt.env, v, ok, tt.value, tt.ok)
		}
	}
}

// TestGPUAffinity: each GPU of the fixture shares a switch with one NIC.
func TestGPUAffinity(t *testing.T) {
	p, _ := newTestPlugin(t, Config{GPUAutoInject: true}, t.TempDir(), newFakeState())
	want := map[int]string{0: "mlx5_0", 1: "mlx5_1", 2: "mlx5_2", 3: "mlx5_3"}
	if !reflect.DeepEqual(p.affinity.nics, want) {
		t.Fatalf("affinity %v, want %v", p.affinity.nics, want)
	}
	nics, _ := p.affinity.nicsFor(p.machine, []string{"NVIDIA_VISIBLE_DEVICES=all"})
	if !reflect.DeepEqual(nics, []string{"mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"}) {
		t.Fatalf("all GPUs: %v", nics)
	}
}
