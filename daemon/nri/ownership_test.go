package nri

import (
	"context"
	"reflect"
	"strings"
	"testing"

	nriapi "github.com/containerd/nri/pkg/api"

	"github.com/railcni/rail/pkg/api"
)

// TestAnnotationOwnership: rail.dev/devices in an allowed namespace never
// reaches umad/issm without nri.umad, nor any node of a NIC another pod
// holds in move mode; the refusal is logged and the container starts.
func TestAnnotationOwnership(t *testing.T) {
	tests := []struct {
		name    string
		umad    bool
		leases  func(*fakeState)
		value   string
		reason  string   // refused: the logged reason says this
		devices []string // accepted: these are injected
		hca     string
	}{
		{name: "umad without nri.umad", value: "umad2", reason: "nri.umad"},
		{name: "issm without nri.umad", value: "rdma_cm,issm0", reason: "nri.umad"},
		{name: "uverbs of a NIC moved into another pod", value: "uverbs1",
			leases: func(f *fakeState) { f.add("other", api.ModeMove, "10.56.0.7/24", "mlx5_1") },
			reason: `moved into another pod`},
		{name: "umad of a NIC moved into another pod, umad allowed", umad: true, value: "umad1",
			leases: func(f *fakeState) { f.add("other", api.ModeMove, "10.56.0.7/24", "mlx5_1") },
			reason: `moved into another pod`},
		{name: "one moved NIC in the list refuses all", value: "uverbs0,uverbs1,rdma_cm",
			leases: func(f *fakeState) { f.add("other", api.ModeMove, "10.56.0.7/24", "mlx5_1") },
			reason: `"uverbs1"`},
		{name: "umad with nri.umad", umad: true, value: "umad2",
			devices: []string{dev("umad2", 231, 2)}},
		{name: "NIC shared in macvlan mode by another pod", value: "uverbs1",
			leases:  func(f *fakeState) { f.add("other", api.ModeMacvlan, "10.56.0.7/24", "mlx5_1") },
			devices: []string{dev("uverbs1", 231, 193)}, hca: "=mlx5_1"},
		{name: "NIC moved into this pod", value: "uverbs1",
			leases:  func(f *fakeState) { f.add("s1", api.ModeMove, "10.56.0.5/24", "mlx5_1") },
			devices: []string{dev("uverbs1", 231, 193), dev("rdma_cm", 10, 58)}, hca: "=mlx5_1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := newFakeState()
			if tt.leases != nil {
				tt.leases(st)
			}
			cfg := Config{UMAD: tt.umad, AnnotationNamespaces: []string{"hpc"}, Memlock: "8Mi"}
			p, logs := newTestPlugin(t, cfg, t.TempDir(), st)
			adj, _, err := p.CreateContainer(context.Background(),
				pod("s1", "hpc", map[string]string{"rail.dev/devices": tt.value}), ctr("app"))
			if err != nil {
				t.Fatalf("CreateContainer failed (the container must still start): %v", err)
			}
			got := summarize(adj)
			refusals := logs.records(t, "refused device annotation")
			if tt.reason != "" {
				if len(got.Devices) != 0 || got.Env[envNCCLHCA] != "" {
					t.Errorf("refused annotation still injected %v", got)
				}
				if len(refusals) != 1 {
					t.Fatalf("want one logged refusal, logs:\n%s", logs)
				}
				if reason, _ := refusals[0]["error"].(string); !strings.Contains(reason, tt.reason) {
					t.Errorf("refusal reason %q, want it to say %q", reason, tt.reason)
				}
				return
			}
			if len(refusals) != 0 || !reflect.DeepEqual(got.Devices, tt.devices) || got.Env[envNCCLHCA] != tt.hca {
				t.Errorf("got %v, want devices %v and %s=%q; logs:\n%s", got, tt.devices, envNCCLHCA, tt.hca, logs)
			}
		})
	}
}

func cdi(names ...string) []*nriapi.CDIDevice {
	out := make([]*nriapi.CDIDevice, len(names))
	for i, n := range names {
		out[i] = &nriapi.CDIDevice{Name: n}
	}
	return out
}
