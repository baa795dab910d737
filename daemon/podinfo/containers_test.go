package podinfo_test

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/railcni/rail/daemon/podinfo"
	"github.com/railcni/rail/daemon/podinfo/podinfotest"
)

// TestContainerDevices: each container keeps only its own devices, so a
// container without GPUs in a GPU pod is told it has none.
func TestContainerDevices(t *testing.T) {
	socket := filepath.Join(t.TempDir(), "kubelet.sock")
	stub := startStub(t, socket)
	client := podinfotest.Dial(t, socket)
	tests := []struct {
		name      string
		pod       string
		resources []string
		want      map[string][]string
		notFound  bool
	}{
		{name: "one container with GPUs, a sidecar without", pod: "prefill",
			want: map[string][]string{"main": {"GPU-a", "GPU-b"}}},
		{name: "each container its own", pod: "multi",
			want: map[string][]string{"c1": {"0"}, "c2": {"1", "0"}}},
		{name: "several resource names", pod: "multi", resources: []string{gpuResource, migResource},
			want: map[string][]string{"c1": {"0"}, "c2": {"1", "0"}, "c3": {"MIG-m"}}},
		{name: "no devices", pod: "cpu-only", want: map[string][]string{}},
		{name: "unknown pod", pod: "ghost", notFound: true},
	}
	for _, mode := range []podinfotest.GetMode{podinfotest.GetServed, podinfotest.GetUnimplemented} {
		stub.SetGetMode(mode)
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				got, err := client.ContainerDevices(context.Background(), "default", tt.pod, tt.resources)
				if tt.notFound {
					if !errors.Is(err, podinfo.ErrPodNotFound) {
						t.Fatalf("ContainerDevices = %v, %v; want ErrPodNotFound", got, err)
					}
					return
				}
				if err != nil || !reflect.DeepEqual(got, tt.want) {
					t.Errorf("ContainerDevices = %v, %v; want %v", got, err, tt.want)
				}
			})
		}
	}
	if _, err := client.ContainerDevices(context.Background(), "", "prefill", nil); err == nil {
		t.Error("ContainerDevices accepted an empty namespace")
	}
}
