package nri

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/railcni/rail/daemon/podinfo"
	"github.com/railcni/rail/daemon/podinfo/podinfotest"
)

// draTable stands in for the node's ResourceSlices: device name -> GPU id.
type draTable map[string]string

func (d draTable) GPUID(_ context.Context, dev podinfo.DRADevice) (string, error) {
	if id, ok := d[dev.Device]; ok {
		return id, nil
	}
	return "", fmt.Errorf("DRA device %s: %w", dev, podinfo.ErrDRAUnknownDevice)
}

func (draTable) MIGParents() map[string]string { return nil }

func gpuClaim(devices ...string) []podinfotest.Claim {
	claim := podinfotest.Claim{Namespace: "gpu", Name: "gpus"}
	for _, d := range devices {
		claim.Devices = append(claim.Devices, podinfotest.ClaimDevice{Driver: podinfo.DefaultDRADriver, Pool: "n1", Device: d})
	}
	return []podinfotest.Claim{claim}
}

// TestAutoInjectDRAGPUs: gpuAutoInject gives a container the NICs of the
// GPUs its DRA claims hold, resolved through the slices like ADD does; a
// DRA GPU it cannot resolve injects nothing for it and is logged as a warning.
func TestAutoInjectDRAGPUs(t *testing.T) {
	_, client := podinfotest.Kubelet(t, []podinfotest.Pod{{Namespace: "gpu", Name: "p-s1", Containers: []podinfotest.Container{
		{Name: "dra", Claims: gpuClaim("gpu-1", "gpu-3")},
		{Name: "ghost", Claims: gpuClaim("gpu-9")},
		{Name: "nic-only", Claims: []podinfotest.Claim{{Namespace: "gpu", Name: "nic",
			Devices: []podinfotest.ClaimDevice{{Driver: "dra.net", Pool: "n1", Device: "gpu-1"}}}}},
	}}})
	slices := draTable{"gpu-1": "0000:21:00.0", "gpu-3": "GPU-00000003-aaaa-bbbb-cccc-dddddddddddd"}
	tests := []struct {
		name string
		dra  podinfo.DRASlices
		want map[string]string // container -> NCCL_IB_HCA
	}{
		{name: "through the slices", dra: slices, want: map[string]string{"dra": "=mlx5_1,mlx5_3", "ghost": "", "nic-only": ""}},
		{name: "no API server", want: map[string]string{"dra": "", "ghost": "", "nic-only": ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := Config{GPUAutoInject: true, GPUAutoInjectNamespaces: []string{"gpu"}}
			p, logs := newKubeletPlugin(t, cfg, t.TempDir(), newFakeState(), &podinfo.GPUSource{Kubelet: client, DRA: tt.dra})
			sandbox := pod("s1", "gpu", nil)
			<-p.kubelet.start(sandbox).done
			for name, want := range tt.want {
				adj, _, err := p.CreateContainer(context.Background(), sandbox, ctr(name))
				if got := summarize(adj).Env[envNCCLHCA]; err != nil || got != want {
					t.Errorf("container %s: %s = %q, %v; want %q\nlogs:\n%s", name, envNCCLHCA, got, err, want, logs)
				}
			}
			recs := logs.records(t, "GPUs the container was given are not found on this node: their NICs are not auto-injected")
			if len(recs) == 0 || !strings.Contains(fmt.Sprint(recs), "gpu.nvidia.com/n1/gpu-9") {
				t.Errorf("no warning naming the unresolved DRA device: %v", recs)
			}
		})
	}
}
