package serve

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"k8s.io/client-go/kubernetes/fake"

	"github.com/railcni/rail/daemon/config"
	"github.com/railcni/rail/daemon/kubeclient"
	"github.com/railcni/rail/pkg/topology"
)

// TestStartGPUSource: one source carries the drivers, the resources and,
// with an API server, the node's ResourceSlices.
func TestStartGPUSource(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	log := slog.New(slog.DiscardHandler)
	tests := []struct {
		name    string
		clients *kubeclient.Clients
		node    string
		wantDRA bool
		wantErr string
	}{
		{name: "no API server: DRA off", node: "n1"},
		{name: "API server: slices informer", clients: fakeClients(fake.NewClientset()), node: "n1", wantDRA: true},
		{name: "API server without a node name", clients: fakeClients(fake.NewClientset()), wantErr: "nodeName"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := &config.Config{NodeName: tt.node, GPUDRADrivers: []string{"gpu.nvidia.com"}, GPUResources: []string{"example.com/gpu"}}
			m := &topology.Machine{}
			src, closeSrc, err := startGPUSource(ctx, tt.clients, cfg, func() *topology.Machine { return m }, log)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("startGPUSource = %v; want an error naming %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer closeSrc()
			if (src.DRA != nil) != tt.wantDRA || len(src.DRADrivers) != 1 || len(src.Resources) != 1 || src.Machine() != m {
				t.Errorf("source %+v: DRA set = %v, want %v", src, src.DRA != nil, tt.wantDRA)
			}
			if src.AsksKubelet() {
				t.Error("no PodResources socket configured, yet the source asks the kubelet")
			}
		})
	}
}

// fakeClients serves requests and watches from one fake clientset.
func fakeClients(c *fake.Clientset) *kubeclient.Clients {
	return &kubeclient.Clients{Kube: c, Watch: c}
}

// TestDRANICWiring: DRA NICs are completed (NIC drivers in the source, a
// table for the service and NRI) only with draNICDrivers and the NRI
// plugin on; the source reads the NIC drivers' slices through the same
// informer as the GPUs'.
func TestDRANICWiring(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tests := []struct {
		name    string
		nri     bool
		drivers []string
		want    bool
	}{
		{name: "on", nri: true, drivers: []string{"dra.net"}, want: true},
		{name: "NRI off", drivers: []string{"dra.net"}},
		{name: "draNICDrivers: []", nri: true, drivers: []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := &config.Config{NodeName: "n1", GPUDRADrivers: []string{"gpu.nvidia.com"}, DRANICDrivers: tt.drivers}
			cfg.NRI.Enabled = tt.nri
			m := &topology.Machine{}
			src, closeSrc, err := startGPUSource(ctx, fakeClients(fake.NewClientset()), cfg, func() *topology.Machine { return m }, slog.New(slog.DiscardHandler))
			if err != nil {
				t.Fatal(err)
			}
			defer closeSrc()
			if got := len(src.NICDrivers) > 0 && src.NICs != nil; got != tt.want {
				t.Errorf("source completes DRA NICs = %v (drivers %v), want %v", got, src.NICDrivers, tt.want)
			}
			if got := draHeld(cfg) != nil; got != tt.want {
				t.Errorf("table made = %v, want %v", got, tt.want)
			}
		})
	}
}
