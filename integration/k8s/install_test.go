package k8s

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
)

const (
	railNamespace = "rail-system"
	railPool      = "10.215.7.0/24"
	metricsPort   = 19473
	memlock       = "4Mi" // below this machine's 8 MiB hard cap, so the change shows
)

// chartDir is the Helm chart under test.
func (c *cluster) chartDir() string { return filepath.Join(c.repo, "manifests/helm/rail") }

// confDir and the other host paths of the rig's node (start-node.sh).
func (c *cluster) confDir() string { return filepath.Join(c.run, "containerd/cni/net.d") }
func (c *cluster) podResources() string {
	return filepath.Join(c.run, "kubelet/root/pod-resources/kubelet.sock")
}

// rigValues are the chart values for this node: the rig's private paths
// instead of the standard ones, the fake machine as raild's root, a pool,
// and the API server's loopback address (the rig runs no kube-proxy, so
// the kubernetes Service's ClusterIP leads nowhere from the host network).
func (c *cluster) rigValues(t *testing.T, m *machine, dir string) string {
	t.Helper()
	api, err := url.Parse(c.apiServerURL(t))
	if err != nil {
		t.Fatal(err)
	}
	values := fmt.Sprintf(`image: {pullPolicy: Never}
apiServer: {host: %q, port: %q}`, api.Hostname(), api.Port()) + fmt.Sprintf(`
cni:
  confDir: %[1]s/containerd/cni/net.d
  binDir: %[1]s/cni/bin
cooldown: 0s
pools:
  - {name: rail, subnet: %[2]s}
nri:
  socket: %[1]s/containerd/nri/nri.sock
  memlock: %[3]s
metrics: {port: %[4]d}
hostPaths:
  kubeletDir: %[1]s/kubelet/root
  stateDir: %[1]s/rail-state
  netnsDir: %[1]s/containerd/state/io.containerd.grpc.v1.cri/netns
  root: %[5]s
`, c.run, railPool, memlock, metricsPort, m.root)
	path := filepath.Join(dir, "values-rig.yaml")
	if err := os.WriteFile(path, []byte(values), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// apiServerURL is the server of the rig's kubeconfig.
func (c *cluster) apiServerURL(t *testing.T) string {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", c.kubeconfig())
	if err != nil {
		t.Fatalf("the rig's kubeconfig: %v", err)
	}
	return cfg.Host
}

// importImage puts the image run.sh built into the node's containerd, as
// `ctr -n k8s.io images import` does on a node without a registry.
func (c *cluster) importImage(t *testing.T) string {
	t.Helper()
	tarball, name := os.Getenv("RAIL_K8S_IMAGE"), os.Getenv("RAIL_K8S_IMAGE_NAME")
	if tarball == "" || name == "" {
		t.Fatal("RAIL_K8S_IMAGE and RAIL_K8S_IMAGE_NAME are not set: run integration/k8s/run.sh")
	}
	c.ctr(t, "images", "import", "--platform", "linux/amd64", tarball)
	if out := c.ctr(t, "images", "ls", "-q"); !strings.Contains(out, name) {
		t.Fatalf("image %s not in containerd after import:\n%s", name, out)
	}
	return name
}

// helmInstall lints, renders and installs the chart with the rig's values.
func (c *cluster) helmInstall(t *testing.T, values, image string) {
	t.Helper()
	c.helmInstallFiles(t, image, values)
}

// helmInstallFiles is helmInstall with several values files, later ones
// overriding earlier ones (helm's -f order).
func (c *cluster) helmInstallFiles(t *testing.T, image string, values ...string) {
	t.Helper()
	var fs []string
	for _, v := range values {
		fs = append(fs, "-f", v)
	}
	c.helm(t, append([]string{"lint", "--strict", c.chartDir()}, fs...)...)
	rendered := c.helm(t, append([]string{"template", "rail", c.chartDir(), "-n", railNamespace}, fs...)...)
	for _, want := range []string{"image: " + image, "drop: [ALL]", "privileged: false", "hostNetwork: true",
		"--conf-dir=" + c.confDir(), "--uninstall"} {
		if !strings.Contains(rendered, want) {
			t.Errorf("helm template: no %q in the rendered chart", want)
		}
	}
	c.helm(t, append(append([]string{"install", "rail", c.chartDir(), "-n", railNamespace, "--create-namespace"}, fs...),
		"--wait", "--timeout", "3m")...)
	c.kubectl(t, "rollout", "status", "-n", railNamespace, "ds/raild", "--timeout=2m")
}

// conflist is the node's one conflist file (the primary's).
func (c *cluster) conflist(t *testing.T) string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(c.confDir(), "*.conflist"))
	if err != nil || len(files) != 1 {
		t.Fatalf("want exactly one conflist in %s, have %v (%v)", c.confDir(), files, err)
	}
	return files[0]
}

// pluginTypes lists the types of a conflist's plugins, in order.
func pluginTypes(data []byte) ([]string, error) {
	var list struct {
		Plugins []struct {
			Type string `json:"type"`
		} `json:"plugins"`
	}
	if err := json.Unmarshal(data, &list); err != nil {
		return nil, err
	}
	var types []string
	for _, p := range list.Plugins {
		types = append(types, p.Type)
	}
	return types, nil
}

// railChained reports whether rail is the last plugin of the conflist.
func (c *cluster) railChained(t *testing.T) bool {
	t.Helper()
	data, err := os.ReadFile(c.conflist(t))
	if err != nil {
		return false
	}
	types, err := pluginTypes(data)
	return err == nil && len(types) > 1 && types[len(types)-1] == "rail"
}

// rewriteConflist writes data over the conflist the way a primary does:
// a temp file renamed over it.
func (c *cluster) rewriteConflist(t *testing.T, data []byte) time.Time {
	t.Helper()
	path := c.conflist(t)
	tmp := path + ".primary-tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	return time.Now()
}
