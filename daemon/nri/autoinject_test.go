package nri

import (
	"context"
	"testing"

	nriapi "github.com/containerd/nri/pkg/api"

	"github.com/railcni/rail/pkg/api"
)

// TestAutoInjectOwnership: with gpuAutoInject, a container gets the NICs
// of the GPUs the runtime gave it (CDI devices), never of GPUs its own
// environment names, and never a NIC moved into another pod.
func TestAutoInjectOwnership(t *testing.T) {
	tests := []struct {
		name   string
		leases func(*fakeState)
		ctr    *nriapi.Container
		hca    string // "": nothing injected
	}{
		{name: "NVIDIA_VISIBLE_DEVICES=all set by the pod itself", ctr: ctr("app", "NVIDIA_VISIBLE_DEVICES=all")},
		{name: "NVIDIA_VISIBLE_DEVICES naming one GPU", ctr: ctr("app", "NVIDIA_VISIBLE_DEVICES=1")},
		{name: "CDI GPU from the runtime", ctr: withCDI(ctr("app"), "nvidia.com/gpu=1"), hca: "=mlx5_1"},
		{name: "CDI GPU wins over the env", ctr: withCDI(ctr("app", "NVIDIA_VISIBLE_DEVICES=all"),
			"k8s.device-plugin.nvidia.com/gpu=GPU-00000002-aaaa-bbbb-cccc-dddddddddddd"), hca: "=mlx5_2"},
		{name: "CDI device of another kind", ctr: withCDI(ctr("app"), "vendor.com/fpga=1")},
		{name: "NIC moved into another pod is skipped",
			leases: func(f *fakeState) { f.add("other", api.ModeMove, "10.56.0.7/24", "mlx5_1") },
			ctr:    withCDI(ctr("app"), "nvidia.com/gpu=1", "nvidia.com/gpu=2"), hca: "=mlx5_2"},
		{name: "only NIC moved into another pod: nothing",
			leases: func(f *fakeState) { f.add("other", api.ModeMove, "10.56.0.7/24", "mlx5_1") },
			ctr:    withCDI(ctr("app"), "nvidia.com/gpu=1")},
		{name: "NIC shared in macvlan mode by another pod",
			leases: func(f *fakeState) { f.add("other", api.ModeMacvlan, "10.56.0.7/24", "mlx5_1") },
			ctr:    withCDI(ctr("app"), "nvidia.com/gpu=1"), hca: "=mlx5_1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := newFakeState()
			if tt.leases != nil {
				tt.leases(st)
			}
			p, logs := newTestPlugin(t, Config{GPUAutoInject: true, GPUAutoInjectNamespaces: []string{"gpu"}, Memlock: "8Mi"}, t.TempDir(), st)
			adj, _, err := p.CreateContainer(context.Background(), pod("s1", "gpu", nil), tt.ctr)
			if err != nil {
				t.Fatalf("CreateContainer: %v", err)
			}
			got := summarize(adj)
			if tt.hca == "" {
				if adj != nil {
					t.Errorf("want nothing injected, got %v\nlogs:\n%s", got, logs)
				}
				return
			}
			if got.Env[envNCCLHCA] != tt.hca {
				t.Errorf("%s = %q, want %q (%v)\nlogs:\n%s", envNCCLHCA, got.Env[envNCCLHCA], tt.hca, got, logs)
			}
		})
	}
}

func withCDI(c *nriapi.Container, names ...string) *nriapi.Container {
	c.CDIDevices = cdi(names...)
	return c
}
