package podinfo_test

import (
	"context"
	"errors"
	"reflect"
	"sync/atomic"
	"testing"

	"github.com/railcni/rail/daemon/podinfo"
	"github.com/railcni/rail/pkg/topology"
)

// tableKubelet answers from a table: container -> devices; the pod holds
// every container's devices.
type tableKubelet struct {
	byCtr     map[string]podinfo.Devices
	err       error
	resources []string // what the last call asked for
}

func (k *tableKubelet) PodGPUs(_ context.Context, _, _ string, resources []string) (podinfo.Devices, error) {
	k.resources = resources
	var all podinfo.Devices
	for _, d := range k.byCtr {
		all.IDs = append(all.IDs, d.IDs...)
		all.DRA = append(all.DRA, d.DRA...)
	}
	return all, k.err
}

func (k *tableKubelet) ContainerGPUs(_ context.Context, _, _ string, resources []string) (map[string]podinfo.Devices, error) {
	k.resources = resources
	return k.byCtr, k.err
}

// TestGPUSource: the source asks with its resources, keeps only the GPU
// drivers' DRA devices, resolves against the machine as it is now, and
// leaves out containers without GPU devices.
func TestGPUSource(t *testing.T) {
	machine := func(uuids ...string) *topology.Machine {
		m := &topology.Machine{}
		for i, u := range uuids {
			m.GPUs = append(m.GPUs, topology.GPU{Index: i, UUID: u})
		}
		return m
	}
	nicDev := podinfo.DRADevice{Driver: "nic.example.com", Pool: "n1", Device: "nic-0"}
	k := &tableKubelet{byCtr: map[string]podinfo.Devices{
		"train": {IDs: []string{"GPU-b"}},
		"nic":   {DRA: []podinfo.DRADevice{nicDev}},
	}}
	var live atomic.Pointer[topology.Machine]
	src := &podinfo.GPUSource{Kubelet: k, Resources: []string{"example.com/gpu"}, Machine: live.Load}
	tests := []struct {
		name      string
		machine   *topology.Machine
		want      []int
		unresolve int
	}{
		{name: "GPU-b is index 1", machine: machine("GPU-a", "GPU-b"), want: []int{1}},
		{name: "the node now has GPU-b at index 0", machine: machine("GPU-b"), want: []int{0}},
		{name: "GPU-b gone", machine: machine("GPU-a"), unresolve: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			live.Store(tt.machine)
			pod, err := src.PodGPUs(t.Context(), "ns", "p")
			if err != nil || !pod.Any() || !reflect.DeepEqual(pod.GPUs, tt.want) || len(pod.Unresolved) != tt.unresolve {
				t.Fatalf("PodGPUs = %+v, %v; want %v with %d unresolved", pod, err, tt.want, tt.unresolve)
			}
			if !reflect.DeepEqual(k.resources, src.Resources) {
				t.Errorf("asked for %v, want %v", k.resources, src.Resources)
			}
			byCtr, err := src.ContainerGPUs(t.Context(), "ns", "p")
			if err != nil || len(byCtr) != 1 || !reflect.DeepEqual(byCtr["train"].GPUs, tt.want) {
				t.Fatalf("ContainerGPUs = %+v, %v; want only train with %v", byCtr, err, tt.want)
			}
		})
	}
	k.err = errors.New("kubelet restarting")
	if _, err := src.ContainerGPUs(t.Context(), "ns", "p"); !errors.Is(err, k.err) {
		t.Errorf("ContainerGPUs error = %v, want the kubelet's", err)
	}
	var none *podinfo.GPUSource
	if none.AsksKubelet() || (&podinfo.GPUSource{}).AsksKubelet() {
		t.Error("a source without a kubelet says it asks one")
	}
}
