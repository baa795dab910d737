package k8s

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/railcni/rail/daemon/config"
)

// rigTools returns the pinned helm and kubectl, skipping without a rig.
func rigTools(t *testing.T) (helm, kubectl string) {
	t.Helper()
	dir := os.Getenv("RAIL_K8S_RIG")
	if dir == "" {
		t.Skip("RAIL_K8S_RIG is not set: run integration/k8s/run.sh (make test-k8s) for the pinned helm and kubectl")
	}
	return filepath.Join(dir, "bin/helm"), filepath.Join(dir, "bin/kubectl")
}

// chartRig is the pinned helm and the chart's folder, with helm's cache
// and config in the test's temporary folders.
func chartRig(t *testing.T) (helm, chart string) {
	t.Helper()
	helm, _ = rigTools(t)
	_, repo := sourceDirs()
	t.Setenv("HELM_CACHE_HOME", t.TempDir())
	t.Setenv("HELM_CONFIG_HOME", t.TempDir())
	return helm, filepath.Join(repo, "manifests/helm/rail")
}

func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestKustomizeMatchesChart: the kustomize base and the NAD overlay's
// config are what generate.sh makes from the chart today, and both overlays build.
func TestKustomizeMatchesChart(t *testing.T) {
	helm, kubectl := rigTools(t)
	_, repo := sourceDirs()
	copyDir := filepath.Join(t.TempDir(), "manifests")
	run(t, "cp", "-a", filepath.Join(repo, "manifests"), copyDir)
	t.Setenv("HELM_CACHE_HOME", t.TempDir())
	t.Setenv("HELM_CONFIG_HOME", t.TempDir())
	run(t, filepath.Join(copyDir, "kustomize/generate.sh"), helm)
	for _, f := range []string{"kustomize/base/raild.yaml", "kustomize/overlays/nad/config.yaml"} {
		if readFile(filepath.Join(copyDir, f)) != readFile(filepath.Join(repo, "manifests", f)) {
			t.Errorf("manifests/%s is stale: run manifests/kustomize/generate.sh", f)
		}
	}
	chained := run(t, kubectl, "kustomize", filepath.Join(repo, "manifests/kustomize/overlays/chained"))
	nad := run(t, kubectl, "kustomize", filepath.Join(repo, "manifests/kustomize/overlays/nad"))
	tests := []struct {
		name, out, want string
		count           int
	}{
		{"chained installs chained", chained, "--mode=chained", 2},
		{"chained config", chained, "mode: chained", 1},
		{"nad installs nad", nad, "--mode=nad", 2},
		{"nad keeps no chained flag", nad, "--mode=chained", 0},
		{"nad config", nad, "mode: nad", 1},
		{"nad has one config map", nad, "kind: ConfigMap", 1},
		{"nad keeps the config map's name (no hash suffix)", nad, "raild-config-", 0},
	}
	for _, tc := range tests {
		if got := strings.Count(tc.out, tc.want); got != tc.count {
			t.Errorf("%s: %q appears %d times, want %d", tc.name, tc.want, got, tc.count)
		}
	}
}

// TestChartRefusesBadValues: bad values stop `helm template` with the key and the fix.
func TestChartRefusesBadValues(t *testing.T) {
	helm, _ := rigTools(t)
	_, repo := sourceDirs()
	chart := filepath.Join(repo, "manifests/helm/rail")
	t.Setenv("HELM_CACHE_HOME", t.TempDir())
	t.Setenv("HELM_CONFIG_HOME", t.TempDir())
	run(t, helm, "lint", "--strict", chart)
	tests := []struct{ set, want string }{
		{"attachPolicy=gpu", `attachPolicy "gpu": use gpu-or-annotated, annotated or all`},
		{"cni.install=multus", `cni.install "multus": use chained or nad`},
		{"hostPaths.root=machine", `hostPaths.root "machine": want an absolute path`},
		{"pools=null", "pools: give at least one pool"},
		{"apiServer.host=10.0.0.10", "apiServer: set both host and port"},
		{"kubernetes.enabled=maybe", `kubernetes.enabled "maybe": use auto, true or false`},
	}
	for _, tc := range tests {
		out, err := exec.Command(helm, "template", "rail", chart, "--set", tc.set).CombinedOutput()
		if err == nil || !strings.Contains(string(out), tc.want) {
			t.Errorf("--set %s: err %v, output %q; want an error saying %q", tc.set, err, out, tc.want)
		}
	}
}

// TestOneImageName: the Makefile, the chart, the kustomize base and the
// README name the same image.
func TestOneImageName(t *testing.T) {
	_, repo := sourceDirs()
	image := strings.TrimSpace(run(t, "make", "-s", "-C", repo, "image-name"))
	repoName, tag, ok := strings.Cut(image, ":")
	if !ok || repoName != "ghcr.io/railcni/rail" {
		t.Fatalf("make image-name = %q, want ghcr.io/railcni/rail:<version>", image)
	}
	find := func(file, pattern string) string {
		m := regexp.MustCompile(pattern).FindStringSubmatch(readFile(filepath.Join(repo, file)))
		if m == nil {
			t.Errorf("%s: nothing matches %s", file, pattern)
			return ""
		}
		return m[1]
	}
	tests := []struct{ file, pattern, want string }{
		{"manifests/helm/rail/Chart.yaml", `(?m)^appVersion: "([^"]+)"`, tag},
		{"manifests/helm/rail/values.yaml", `(?m)^  repository: (\S+)`, repoName},
		{"manifests/kustomize/base/kustomization.yaml", `(?m)^  - name: (\S+)`, repoName},
		{"manifests/kustomize/base/kustomization.yaml", `newTag: "([^"]+)"`, tag},
		{"manifests/kustomize/base/raild.yaml", `image: (\S+)`, image},
		{"README.md", "(ghcr\\.io/railcni/rail:[0-9][^\\s)`]*)", image},
	}
	for _, tc := range tests {
		if got := find(tc.file, tc.pattern); got != tc.want {
			t.Errorf("%s names %q, the Makefile %q", tc.file, got, tc.want)
		}
	}
}

// loadRendered is the config of the raild-config ConfigMap in out as raild
// loads and finishes it; a config raild refuses fails the test.
func loadRendered(t *testing.T, out string) *config.Config {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(renderedConfig(t, out)), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path)
	if err == nil {
		err = cfg.Finish()
	}
	if err != nil {
		t.Fatalf("raild refuses the rendered config: %v", err)
	}
	return cfg
}
