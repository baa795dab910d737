package pool

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"github.com/railcni/rail/daemon/railpool"
	"github.com/railcni/rail/integration/kapi"
)

// chartDir is the Helm chart of this repository.
func chartDir(t *testing.T) string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("no caller")
	}
	return filepath.Join(filepath.Dir(file), "../../../manifests/helm/rail")
}

// cluster is a real API server with the chart's CRDs and RBAC.
type cluster struct {
	*kapi.Server
	dyn dynamic.Interface
	as  string // the chart's service account, as a user name
}

func newCluster(t *testing.T) *cluster {
	s := kapi.Start(t)
	chart := chartDir(t)
	for _, crd := range []string{"railpools.rail.dev.yaml", "railpoolblocks.rail.dev.yaml"} {
		s.ApplyCRD(t, filepath.Join(chart, "crds", crd))
	}
	dyn, err := dynamic.NewForConfig(s.Config)
	if err != nil {
		t.Fatal(err)
	}
	c := &cluster{Server: s, dyn: dyn}
	c.as = c.applyChartRBAC(t, chart)
	return c
}

// applyChartRBAC creates the chart's ClusterRole and binding (rendered by
// helm) and returns the user name of the service account they bind.
func (c *cluster) applyChartRBAC(t *testing.T, chart string) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(os.Getenv(kapi.EnvBin), "helm"), "template", "rail", chart, "-n", "rail-system",
		"--show-only", "templates/serviceaccount.yaml")
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+t.TempDir(), "HELM_CONFIG_HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helm template: %v\n%s", err, out)
	}
	ctx := context.Background()
	var sa corev1.ServiceAccount
	for _, doc := range strings.Split(string(out), "\n---\n") {
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
			t.Fatal(err)
		}
		switch meta.Kind {
		case "ServiceAccount":
			err = yaml.Unmarshal([]byte(doc), &sa)
		case "ClusterRole":
			var role rbacv1.ClusterRole
			if err = yaml.Unmarshal([]byte(doc), &role); err == nil {
				_, err = c.Clients.Kube.RbacV1().ClusterRoles().Create(ctx, &role, metav1.CreateOptions{})
			}
		case "ClusterRoleBinding":
			var binding rbacv1.ClusterRoleBinding
			if err = yaml.Unmarshal([]byte(doc), &binding); err == nil {
				_, err = c.Clients.Kube.RbacV1().ClusterRoleBindings().Create(ctx, &binding, metav1.CreateOptions{})
			}
		}
		if err != nil {
			t.Fatalf("apply %s from the chart: %v", meta.Kind, err)
		}
	}
	if sa.Name == "" {
		t.Fatalf("the chart renders no ServiceAccount:\n%s", out)
	}
	return "system:serviceaccount:" + sa.Namespace + ":" + sa.Name
}

func (c *cluster) createNode(t *testing.T, name string, labels map[string]string) *corev1.Node {
	t.Helper()
	n, err := c.Clients.Kube.CoreV1().Nodes().Create(context.Background(),
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// createPool creates a RailPool as a user would (kubectl apply of YAML).
func (c *cluster) createPool(t *testing.T, manifest string) {
	t.Helper()
	if err := c.tryCreatePool(t, manifest); err != nil {
		t.Fatalf("create railpool: %v", err)
	}
}

func (c *cluster) tryCreatePool(t *testing.T, manifest string) error {
	t.Helper()
	var obj map[string]any
	if err := yaml.Unmarshal([]byte(manifest), &obj); err != nil {
		t.Fatal(err)
	}
	_, err := c.dyn.Resource(railpool.PoolResource).Create(context.Background(), &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{})
	return err
}

// blocks returns the blocks of pool by name.
func (c *cluster) blocks(t *testing.T, pool string) map[string]railpool.RailPoolBlock {
	t.Helper()
	list, err := c.dyn.Resource(railpool.BlockResource).List(context.Background(), metav1.ListOptions{LabelSelector: railpool.PoolLabel + "=" + pool})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]railpool.RailPoolBlock{}
	for _, item := range list.Items {
		var b railpool.RailPoolBlock
		if err := k8sruntime.DefaultUnstructuredConverter.FromUnstructured(item.Object, &b); err != nil {
			t.Fatal(err)
		}
		out[b.Name] = b
	}
	return out
}

// endedWatches is how many WATCH requests on resource the API server has
// finished (its apiserver_request_total metric).
func (c *cluster) endedWatches(t *testing.T, resource string) int {
	t.Helper()
	raw, err := c.Clients.Kube.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(context.Background())
	if err != nil {
		t.Fatalf("API server metrics: %v", err)
	}
	total := 0
	for _, line := range strings.Split(string(raw), "\n") {
		if !strings.HasPrefix(line, "apiserver_request_total{") || !strings.Contains(line, `resource="`+resource+`"`) || !strings.Contains(line, `verb="WATCH"`) {
			continue
		}
		n, err := strconv.Atoi(line[strings.LastIndexByte(line, ' ')+1:])
		if err != nil {
			t.Fatalf("metric line %q: %v", line, err)
		}
		total += n
	}
	return total
}

// kubeconfigAs writes a kubeconfig that acts as the chart's service
// account (impersonation by the test admin), for processes like raild.
func (c *cluster) kubeconfigAs(t *testing.T) string {
	t.Helper()
	kc, err := clientcmd.LoadFromFile(c.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	for _, user := range kc.AuthInfos {
		user.Impersonate = c.as
	}
	path := filepath.Join(c.Dir, "kubeconfig-raild")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}
