package k8s

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/railcni/rail/daemon/config"
)

// TestChartTopologyFileForNRI: with the chart's topologyFile, raild reads
// the file where the chart mounts it and NRI mounts the node's path into
// containers (docs/environment.md); without it, NRI has no file either.
func TestChartTopologyFileForNRI(t *testing.T) {
	helm, chart := chartRig(t)
	for _, tc := range []struct {
		set, raild, onHost string
	}{
		{"topologyFile=/opt/microsoft/ndv5-topo.xml", "/etc/rail-topology/topology.xml", "/opt/microsoft/ndv5-topo.xml"},
		{"topologyFile=", "", ""},
	} {
		out := run(t, helm, "template", "rail", chart, "--set", tc.set)
		path := filepath.Join(t.TempDir(), "config.yaml")
		if err := os.WriteFile(path, []byte(renderedConfig(t, out)), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg, err := config.Load(path)
		if err != nil {
			t.Fatalf("%s: raild refuses the rendered config: %v", tc.set, err)
		}
		if err := cfg.NRI.Validate(); err != nil {
			t.Fatalf("%s: nri section refused: %v", tc.set, err)
		}
		if cfg.TopologyFile != tc.raild || cfg.NRI.TopologyFileOnHost != tc.onHost {
			t.Errorf("%s: topologyFile %q, nri.topologyFileOnHost %q; want %q, %q",
				tc.set, cfg.TopologyFile, cfg.NRI.TopologyFileOnHost, tc.raild, tc.onHost)
		}
	}
}
