package serve

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"k8s.io/client-go/kubernetes/fake"

	"github.com/railcni/rail/daemon/config"
	"github.com/railcni/rail/daemon/kubeclient"
	"github.com/railcni/rail/daemon/nri"
	"github.com/railcni/rail/daemon/service"
)

func TestStartDRA(t *testing.T) {
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
			cfg := &config.Config{NodeName: tt.node, GPUDRADrivers: []string{"gpu.nvidia.com"}}
			var opt service.Options
			var kubelet nri.Kubelet
			err := startDRA(ctx, tt.clients, cfg, &opt, &kubelet, log)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("startDRA = %v; want an error naming %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (opt.DRA != nil) != tt.wantDRA || (kubelet.DRA != nil) != tt.wantDRA || len(opt.GPUDRADrivers) != 1 || len(kubelet.GPUDRADrivers) != 1 {
				t.Errorf("DRA set = %v/%v (want %v), drivers %v/%v", opt.DRA != nil, kubelet.DRA != nil, tt.wantDRA, opt.GPUDRADrivers, kubelet.GPUDRADrivers)
			}
		})
	}
}

// fakeClients serves requests and watches from one fake clientset.
func fakeClients(c *fake.Clientset) *kubeclient.Clients {
	return &kubeclient.Clients{Kube: c, Watch: c}
}
