package deviceplugin

import (
	"path/filepath"
	"strings"
	"testing"

	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"github.com/railcni/rail/pkg/topology"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

// TestDualPortResources: each port of a dual-port HCA is a rail resource
// of its own, with the device's uverbs, its own port's umad/issm, and a
// health read from its own port; the node-wide resource lists the shared
// uverbs once.
func TestDualPortResources(t *testing.T) {
	root := filepath.Join(t.TempDir(), "root")
	if _, err := fakesys.Write(root, "dualport-2s", fakesys.Options{}); err != nil {
		t.Fatal(err)
	}
	if err := fakesys.SetPortState(root, "mlx4_0", 2, "DOWN"); err != nil {
		t.Fatal(err)
	}
	m, err := topology.Discover(root) // the snapshot after the port went down
	if err != nil {
		t.Fatal(err)
	}
	s, err := Config{PerRail: true, UMAD: true, Rails: []string{"mlx4_0", "mlx4_0:2", "mlx4_1:2"}}.settings()
	if err != nil {
		t.Fatal(err)
	}
	rails, err := railNICs(s, m)
	if err != nil {
		t.Fatal(err)
	}
	res := buildResources(s, m, rails)
	tests := []struct {
		name   string
		specs  string
		health string
	}{
		{"rail.dev/rdma", "uverbs0 umad0 issm0 umad1 issm1 uverbs1 umad2 umad3 uverbs2 umad4 issm4 rdma_cm", pluginapi.Healthy},
		{"rail.dev/rail0", "uverbs0 umad0 issm0 rdma_cm", pluginapi.Healthy},
		{"rail.dev/rail1", "uverbs0 umad1 issm1 rdma_cm", pluginapi.Unhealthy},
		{"rail.dev/rail2", "uverbs1 umad3 rdma_cm", pluginapi.Healthy},
	}
	if len(res) != len(tests) {
		t.Fatalf("%d resources, want %d", len(res), len(tests))
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := res[i]
			var names []string
			for _, spec := range r.specs {
				names = append(names, strings.TrimPrefix(spec.HostPath, "/dev/infiniband/"))
			}
			if r.name != tc.name || strings.Join(names, " ") != tc.specs {
				t.Errorf("resource %s specs %v, want %s with %s", r.name, names, tc.name, tc.specs)
			}
			if h := r.health; h != tc.health {
				t.Errorf("health %s, want %s", h, tc.health)
			}
		})
	}
	bad := s
	bad.Rails = []string{"mlx4_0:3"}
	if _, err := railNICs(bad, m); err == nil ||
		!strings.Contains(err.Error(), `devicePlugin.rails[0]: NIC "mlx4_0:3"`) {
		t.Errorf("rails naming no port: %v", err)
	}
}
