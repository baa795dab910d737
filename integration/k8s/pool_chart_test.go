package k8s

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestChartRailPools: the chart installs the RailPool CRDs, grants raild
// what claiming blocks needs, and takes `pools: []` (every pool a RailPool).
func TestChartRailPools(t *testing.T) {
	helm, _ := rigTools(t)
	_, repo := sourceDirs()
	chart := filepath.Join(repo, "manifests/helm/rail")
	t.Setenv("HELM_CACHE_HOME", t.TempDir())
	t.Setenv("HELM_CONFIG_HOME", t.TempDir())
	out := run(t, helm, "template", "rail", chart, "-n", "rail-system", "--include-crds", "--set-json", "pools=[]")
	for _, want := range []string{
		"name: railpools.rail.dev",
		"name: railpoolblocks.rail.dev",
		"    pools: []",
		"resources: [nodes]\n    verbs: [get]",
		"resources: [railpools]\n    verbs: [list, watch]",
		"resources: [railpoolblocks]\n    verbs: [list, create, delete]",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("helm template --set-json pools=[] lacks %q", want)
		}
	}
}
