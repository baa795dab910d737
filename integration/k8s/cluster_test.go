package k8s

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// cluster is the rig's running node, driven through kubectl and helm.
type cluster struct {
	criDir, k8sDir string // cache dirs setup.sh printed
	here, repo     string // integration/k8s, the repository
	run            string // start-node.sh's run dir
	fakeGPU        string // the fake device plugin binary
}

// requireCluster skips unless run.sh prepared the rig and we are root.
func requireCluster(t *testing.T) *cluster {
	t.Helper()
	c := &cluster{criDir: os.Getenv("RAIL_CRI_RIG"), k8sDir: os.Getenv("RAIL_K8S_RIG"), fakeGPU: os.Getenv("RAIL_K8S_FAKEGPU")}
	if c.criDir == "" || c.k8sDir == "" || c.fakeGPU == "" {
		t.Skip("RAIL_CRI_RIG, RAIL_K8S_RIG and RAIL_K8S_FAKEGPU are not set: run integration/k8s/run.sh (make test-k8s)")
	}
	if os.Geteuid() != 0 {
		t.Skip("the Kubernetes rig needs root")
	}
	c.here, c.repo = sourceDirs()
	c.run = os.Getenv("RAIL_K8S_RUN")
	if c.run == "" {
		c.run = "/tmp/rail-k8s"
	}
	return c
}

// sourceDirs returns integration/k8s and the repository root.
func sourceDirs() (here, repo string) {
	_, file, _, _ := runtime.Caller(0)
	here = filepath.Dir(file)
	return here, filepath.Clean(filepath.Join(here, "../.."))
}

// start runs start-node.sh with the primary conflist; stop is registered
// as a cleanup, so the node goes even when the test fails.
func (c *cluster) start(t *testing.T, conflist string) time.Duration {
	t.Helper()
	t.Cleanup(func() { c.stop(t) })
	t0 := time.Now()
	out, err := c.script("start-node.sh", c.criDir, c.k8sDir, c.fakeGPU, conflist)
	if err != nil {
		t.Fatalf("start-node.sh: %v\n%s", err, out)
	}
	t.Logf("%s", bytes.TrimSpace(out))
	return time.Since(t0)
}

func (c *cluster) stop(t *testing.T) {
	if t.Failed() {
		c.diagnose(t)
		for _, name := range []string{"kubelet", "containerd"} {
			t.Logf("%s log (tail):\n%s", name, tail(readFile(filepath.Join(c.run, "log", name+".log")), 30))
		}
	}
	out, err := c.script("stop-node.sh", c.criDir, "--purge")
	if err != nil {
		t.Errorf("stop-node.sh: %v\n%s", err, out)
	}
}

// diagnose logs what explains a failure: every pod, raild's pod and its logs.
func (c *cluster) diagnose(t *testing.T) {
	for _, args := range [][]string{
		{"get", "pods", "-A", "-o", "wide"},
		{"describe", "pods", "-n", "rail-system"},
		{"logs", "-n", "rail-system", "ds/raild", "--all-containers", "--tail=60"},
		{"logs", "-n", "rail-system", "ds/raild", "-c", "raild", "--previous", "--tail=30"},
		{"get", "events", "-n", "rail-e2e", "--sort-by=.lastTimestamp"},
	} {
		out, err := c.kubectlErr(args...)
		t.Logf("kubectl %s: %v\n%s", strings.Join(args, " "), err, tail(out, 60))
	}
}

func (c *cluster) script(name string, args ...string) ([]byte, error) {
	cmd := exec.Command(filepath.Join(c.here, name), args...)
	cmd.Env = append(os.Environ(), "RAIL_K8S_RUN="+c.run)
	return cmd.CombinedOutput()
}

func (c *cluster) kubeconfig() string { return filepath.Join(c.run, "kubeconfig") }

// kubectl runs kubectl against the rig and returns trimmed stdout.
func (c *cluster) kubectl(t *testing.T, args ...string) string {
	t.Helper()
	out, err := c.kubectlErr(args...)
	if err != nil {
		t.Fatalf("kubectl %s: %v", strings.Join(args, " "), err)
	}
	return out
}

func (c *cluster) kubectlErr(args ...string) (string, error) {
	return c.tool("kubectl", nil, args...)
}

// kubectlApply applies a manifest given as text.
func (c *cluster) kubectlApply(t *testing.T, manifest string) {
	t.Helper()
	if _, err := c.tool("kubectl", strings.NewReader(manifest), "apply", "-f", "-"); err != nil {
		t.Fatalf("kubectl apply: %v\n%s", err, manifest)
	}
}

func (c *cluster) helm(t *testing.T, args ...string) string {
	t.Helper()
	out, err := c.tool("helm", nil, args...)
	if err != nil {
		t.Fatalf("helm %s: %v", strings.Join(args, " "), err)
	}
	return out
}

func (c *cluster) tool(name string, stdin *strings.Reader, args ...string) (string, error) {
	return c.toolAt(filepath.Join(c.k8sDir, "bin", name), stdin, args...)
}

// toolAt runs a binary with the rig's kubeconfig and helm dirs; on failure
// it returns what the binary printed on stdout as well as the error.
func (c *cluster) toolAt(path string, stdin *strings.Reader, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+c.kubeconfig(), "HELM_CACHE_HOME="+filepath.Join(c.run, "helm/cache"),
		"HELM_CONFIG_HOME="+filepath.Join(c.run, "helm/config"), "HELM_DATA_HOME="+filepath.Join(c.run, "helm/data"))
	if stdin != nil {
		cmd.Stdin = stdin
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		// stdout too: a command that fails on purpose (raild doctor) says why there
		return strings.TrimSpace(string(out)), fmt.Errorf("%w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}

// ctr runs containerd's ctr against the rig's containerd.
func (c *cluster) ctr(t *testing.T, args ...string) string {
	t.Helper()
	full := append([]string{"--address", filepath.Join(c.run, "containerd/containerd.sock"), "-n", "k8s.io"}, args...)
	out, err := exec.Command(filepath.Join(c.criDir, "bin/ctr"), full...).CombinedOutput()
	if err != nil {
		t.Fatalf("ctr %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// getJSON runs kubectl get -o json and decodes into v.
func (c *cluster) getJSON(t *testing.T, v any, args ...string) {
	t.Helper()
	out := c.kubectl(t, append([]string{"get", "-o", "json"}, args...)...)
	if err := json.Unmarshal([]byte(out), v); err != nil {
		t.Fatalf("kubectl get %v: %v", args, err)
	}
}

// waitFor polls cond until it holds; the deadline only bounds a broken run.
func waitFor(t *testing.T, what string, timeout time.Duration, cond func() bool) time.Duration {
	t.Helper()
	t0 := time.Now()
	for !cond() {
		if time.Since(t0) > timeout {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return time.Since(t0)
}

func readFile(path string) string {
	data, _ := os.ReadFile(path)
	return string(data)
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
