package podinfo_test

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/railcni/rail/daemon/podinfo"
	"github.com/railcni/rail/daemon/podinfo/podinfotest"
)

func draDev(driver, device, claim string) podinfo.DRADevice {
	return podinfo.DRADevice{Driver: driver, Pool: "node-1", Device: device, Claim: claim}
}

// TestPodGPUs: the DRA devices of a pod's claims come beside its
// device-plugin IDs, every driver, each device once.
func TestPodGPUs(t *testing.T) {
	socket := filepath.Join(t.TempDir(), "kubelet.sock")
	stub := startStub(t, socket)
	client := podinfotest.Dial(t, socket)
	tests := []struct {
		name string
		pod  string
		want podinfo.Devices
	}{
		{name: "device plugin and claims", pod: "dra", want: podinfo.Devices{IDs: []string{"GPU-a"}, DRA: []podinfo.DRADevice{
			draDev(draDriver, "gpu-0", "default/two-gpus"), draDev(draDriver, "gpu-1", "default/two-gpus"),
			draDev(nicDriver, "eth1", "default/nic")}}},
		{name: "device plugin only", pod: "prefill", want: podinfo.Devices{IDs: []string{"GPU-a", "GPU-b"}}},
		{name: "nothing", pod: "cpu-only", want: podinfo.Devices{}},
	}
	for _, mode := range []podinfotest.GetMode{podinfotest.GetServed, podinfotest.GetUnimplemented} {
		stub.SetGetMode(mode)
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				got, err := client.PodGPUs(context.Background(), "default", tt.pod, nil)
				if err != nil || !reflect.DeepEqual(got, tt.want) {
					t.Errorf("PodGPUs = %+v, %v; want %+v", got, err, tt.want)
				}
				if got.Empty() != (len(tt.want.IDs)+len(tt.want.DRA) == 0) {
					t.Errorf("Empty() = %v for %+v", got.Empty(), got)
				}
			})
		}
	}
}

// TestContainerGPUs: each container gets its own claims' devices; a
// container with neither kind is left out.
func TestContainerGPUs(t *testing.T) {
	socket := filepath.Join(t.TempDir(), "kubelet.sock")
	startStub(t, socket)
	client := podinfotest.Dial(t, socket)
	got, err := client.ContainerGPUs(context.Background(), "default", "dra", nil)
	want := map[string]podinfo.Devices{
		"trainer": {IDs: []string{"GPU-a"}, DRA: []podinfo.DRADevice{draDev(draDriver, "gpu-0", "default/two-gpus"),
			draDev(draDriver, "gpu-1", "default/two-gpus"), draDev(nicDriver, "eth1", "default/nic")}},
		"helper": {DRA: []podinfo.DRADevice{draDev(draDriver, "gpu-1", "default/two-gpus")}},
	}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("ContainerGPUs = %+v, %v; want %+v", got, err, want)
	}
	if s := want["helper"].DRA[0].String(); s != "gpu.nvidia.com/node-1/gpu-1" {
		t.Errorf("String() = %q", s)
	}
}
