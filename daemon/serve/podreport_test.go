package serve

import (
	"context"
	"testing"

	"k8s.io/client-go/kubernetes/fake"

	"github.com/railcni/rail/daemon/kubeclient"
	"github.com/railcni/rail/daemon/metrics"
)

func TestStartPodReport(t *testing.T) {
	tests := []struct {
		name    string
		clients *kubeclient.Clients
		wantOn  bool
	}{
		{name: "no API server: off", clients: nil},
		{name: "API server: on", clients: &kubeclient.Clients{Kube: fake.NewClientset()}, wantOn: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			m := metrics.New()
			r, err := startPodReport(ctx, tt.clients, "node1", m, nil)
			if err != nil {
				t.Fatal(err)
			}
			if (r != nil) != tt.wantOn {
				t.Fatalf("reporter = %v, want on %v", r, tt.wantOn)
			}
			if !tt.wantOn {
				return
			}
			families, err := m.Registry.Gather()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := startPodReport(ctx, tt.clients, "node1", m, nil); err == nil {
				t.Errorf("the reporter's metrics are not on raild's registry (a second one registered again; %d families)", len(families))
			}
		})
	}
}
