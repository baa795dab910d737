package k8s

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/railcni/rail/daemon/config"
)

// nodeClassValues are the seeds' mixed lab as chart values: V100 nodes with
// one dual-port IB card, A100 nodes with two IB cards and a RoCE LAG.
const nodeClassValues = `[
 {"name": "v100", "nodeSelector": {"matchLabels": {"nvidia.com/gpu.family": "volta"}},
  "nics": ["mlx5_0"], "modes": ["move"], "rails": {"nics": {"mlx5_0": 0}}},
 {"name": "a100", "nodeSelector": {"matchExpressions": [{"key": "nvidia.com/gpu.family", "operator": "In", "values": ["ampere"]}]},
  "nics": ["mlx5_0", "mlx5_2", "mlx5_bond_0"], "modes": ["move", "macvlan"], "allowProtectedNICs": ["mlx5_bond_0"],
  "pools": {"rail": {"nics": ["mlx5_0", "mlx5_2"]}}}]`

// TestChartNodeClasses: the chart renders nodeClasses into raild's config,
// which raild loads and matches against a Node's labels; bad classes stop
// `helm template` with the key.
func TestChartNodeClasses(t *testing.T) {
	helm, _ := rigTools(t)
	_, repo := sourceDirs()
	chart := filepath.Join(repo, "manifests/helm/rail")
	t.Setenv("HELM_CACHE_HOME", t.TempDir())
	t.Setenv("HELM_CONFIG_HOME", t.TempDir())
	out := run(t, helm, "template", "rail", chart, "--set-json", "nodeClasses="+nodeClassValues,
		"--set-json", `allowProtectedNICs=["0000:3b:00.0"]`)
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(renderedConfig(t, out)), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1") // raild in a pod: the API connection is on
	t.Setenv("NODE_NAME", "gpu-1")
	for _, tc := range []struct {
		labels map[string]string
		class  string
		nics   string
	}{
		{map[string]string{"nvidia.com/gpu.family": "volta"}, "v100", "mlx5_0"},
		{map[string]string{"nvidia.com/gpu.family": "ampere"}, "a100", "mlx5_0,mlx5_2,mlx5_bond_0"},
		{map[string]string{"nvidia.com/gpu.family": "hopper"}, "", ""},
	} {
		cfg, err := config.Load(path)
		if err == nil {
			err = cfg.Finish()
		}
		if err != nil {
			t.Fatalf("raild refuses the rendered config: %v", err)
		}
		class, err := cfg.ApplyNodeClass(tc.labels)
		if err != nil || class != tc.class || strings.Join(cfg.NICs, ",") != tc.nics {
			t.Errorf("labels %v: class %q nics %v (%v), want %q %q", tc.labels, class, cfg.NICs, err, tc.class, tc.nics)
		}
	}
	for _, tc := range []struct{ set, want string }{
		{`nodeClasses=[{"nodeSelector": {"matchLabels": {"a": "b"}}}]`, "nodeClasses[0].name: give each class a name"},
		{`nodeClasses=[{"name": "a"}]`, "nodeClasses[0].nodeSelector: give matchLabels or matchExpressions"},
		{`nodeClasses={"name": "a"}`, "nodeClasses: want a list of classes"},
	} {
		out, err := exec.Command(helm, "template", "rail", chart, "--set-json", tc.set).CombinedOutput()
		if err == nil || !strings.Contains(string(out), tc.want) {
			t.Errorf("--set-json %s: err %v, output %q; want an error saying %q", tc.set, err, out, tc.want)
		}
	}
}

// renderedConfig is config.yaml of the raild-config ConfigMap in out.
func renderedConfig(t *testing.T, out string) string {
	t.Helper()
	for _, doc := range strings.Split(out, "\n---\n") {
		var cm struct {
			Kind     string                `json:"kind"`
			Metadata struct{ Name string } `json:"metadata"`
			Data     map[string]string     `json:"data"`
		}
		if err := yaml.Unmarshal([]byte(doc), &cm); err != nil || cm.Kind != "ConfigMap" || cm.Metadata.Name != "raild-config" {
			continue
		}
		return cm.Data["config.yaml"]
	}
	t.Fatalf("helm template: no raild-config ConfigMap in\n%s", out)
	return ""
}
