package kapi_test

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	nadv1 "github.com/k8snetworkplumbingwg/network-attachment-definition-client/pkg/apis/k8s.cni.cncf.io/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/yaml"

	"github.com/railcni/rail/daemon/podreport"
	"github.com/railcni/rail/integration/kapi"
	"github.com/railcni/rail/pkg/api"
)

// otherWriterPeriod is how often the concurrent writer updates the pod:
// 20 updates a second, far more than the kubelet or Multus ever write.
const otherWriterPeriod = 50 * time.Millisecond

// primaryStatus is what the primary plugin's side wrote before rail ran.
const primaryStatus = `[{"name":"k8s-pod-network","interface":"eth0","ips":["10.244.1.7"],"default":true,"dns":{}}]`

// TestPodReportAgainstAPIServer runs raild's service with the reporter
// against a real API server, as raild's service account with exactly the
// chart's RBAC: Events on the pods, and rail's entries in network-status
// while another writer keeps updating the pod.
func TestPodReportAgainstAPIServer(t *testing.T) {
	s := kapi.Start(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	admin := s.Clients.Kube
	pod := createStatusPod(t, admin, "trainer", primaryStatus)
	// Between raild's read of the pod and its first patch, another writer
	// adds its own entry: raild's patch must conflict, and the retry keep it.
	race := &interposer{before: func() { addEntry(t, admin, "trainer", otherEntry) }}
	raild := asRaild(t, s.Config, admin, race)
	createStatusPod(t, admin, "latecomer", "")

	reporter, err := podreport.Start(ctx, raild, podreport.Options{NodeName: "node1", RetryBase: 10 * time.Millisecond, RetryMax: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	svc := newService(t, reporter)

	fast := rest.CopyConfig(s.Config)
	fast.QPS, fast.Burst = 1000, 1000 // the other writer is not slowed by a client-side rate limit
	writer, err := kubernetes.NewForConfig(fast)
	if err != nil {
		t.Fatal(err)
	}
	stopWriter, ticks, conflicts := otherWriter(t, writer, "trainer")
	defer stopWriter()
	req := api.AllocateRequest{Sandbox: "sb1", Netns: "/var/run/netns/sb1", CNIIfName: "eth0", Network: "k8s-pod-network",
		Mode: api.ModeMove, Chained: true, PodNamespace: "default", PodName: "trainer", PodUID: string(pod.UID),
		Annotations: map[string]string{api.AnnotationGPUs: "0,2"}}
	if _, err := svc.Allocate(ctx, req); err != nil {
		t.Fatal(err)
	}
	want := "k8s-pod-network/eth0 other-net/net9 k8s-pod-network/rail0 k8s-pod-network/rail1"
	annotation := waitStatus(t, admin, "trainer", want)
	stopWriter()
	if race.conflicts.Load() == 0 {
		t.Error("raild's patch never conflicted although the pod changed after raild read it")
	}
	if firstEntry(t, annotation) != firstEntry(t, primaryStatus) {
		t.Errorf("the primary's entry changed:\n%s", annotation)
	}
	t.Logf("network-status of default/trainer (the other writer updated the pod %d times meanwhile, %d of its updates conflicted):\n%s",
		atomic.LoadInt64(ticks), atomic.LoadInt64(conflicts), annotation)

	late := req
	late.Sandbox, late.PodName, late.Annotations = "sb2", "latecomer", map[string]string{api.AnnotationAttach: "true"}
	late.Selector.NICs = []string{"mlx5_0"}
	if _, err := svc.Allocate(ctx, late); !api.IsCode(err, api.CodeNoNIC) {
		t.Fatalf("latecomer: %v, want no NIC", err)
	}
	for _, e := range waitEvents(t, admin, 3) {
		t.Logf("event %s %s on %s/%s: %s", e.Type, e.Reason, e.Regarding.Namespace, e.Regarding.Name, e.Note)
		if e.Regarding.Kind != "Pod" || e.Regarding.UID == "" {
			t.Errorf("event regards %+v", e.Regarding)
		}
	}

	if err := svc.Release(ctx, api.AttachmentRequest{Sandbox: "sb1", CNIIfName: "eth0", Network: "k8s-pod-network"}); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, admin, "trainer", "k8s-pod-network/eth0 other-net/net9")
	final, err := admin.CoreV1().Pods("default").Get(ctx, "trainer", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if final.Annotations["example.com/tick"] == "" || firstEntry(t, final.Annotations[nadv1.NetworkStatusAnnot]) != firstEntry(t, primaryStatus) {
		t.Errorf("after DEL the other writer's annotation or the primary's entry is gone: %v", final.Annotations)
	}
}

// asRaild is a client acting as raild's service account, bound to the
// ClusterRole the chart renders (the generated kustomize base).
func asRaild(t *testing.T, cfg *rest.Config, admin kubernetes.Interface, race *interposer) kubernetes.Interface {
	t.Helper()
	ctx := context.Background()
	data, err := os.ReadFile(filepath.Join("..", "..", "manifests", "kustomize", "base", "raild.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var role *rbacv1.ClusterRole
	var binding *rbacv1.ClusterRoleBinding
	for _, doc := range bytes.Split(data, []byte("\n---")) {
		var meta metav1.TypeMeta
		if yaml.Unmarshal(doc, &meta) != nil {
			continue
		}
		switch meta.Kind {
		case "ClusterRole":
			role = &rbacv1.ClusterRole{}
			err = yaml.Unmarshal(doc, role)
		case "ClusterRoleBinding":
			binding = &rbacv1.ClusterRoleBinding{}
			err = yaml.Unmarshal(doc, binding)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if role == nil || binding == nil || len(binding.Subjects) != 1 {
		t.Fatal("the kustomize base has no ClusterRole and ClusterRoleBinding for raild")
	}
	if _, err := admin.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	sa := binding.Subjects[0]
	as := rest.CopyConfig(cfg)
	as.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + sa.Namespace + ":" + sa.Name,
		Groups: []string{"system:serviceaccounts", "system:authenticated"}}
	as.Wrap(func(next http.RoundTripper) http.RoundTripper { race.next = next; return race })
	kube, err := kubernetes.NewForConfig(as)
	if err != nil {
		t.Fatal(err)
	}
	return kube
}

// otherEntry is another writer's network-status entry.
const otherEntry = `{"name":"other-net","interface":"net9","ips":["192.168.9.9"]}`

// interposer runs before() once, just before raild's first patch of a
// pod, and counts the conflicts raild's patches get.
type interposer struct {
	next      http.RoundTripper
	before    func()
	once      sync.Once
	conflicts atomic.Int32
}

func (i *interposer) RoundTrip(req *http.Request) (*http.Response, error) {
	patch := req.Method == http.MethodPatch && strings.Contains(req.URL.Path, "/pods/")
	if patch {
		i.once.Do(i.before)
	}
	resp, err := i.next.RoundTrip(req)
	if patch && err == nil && resp.StatusCode == http.StatusConflict {
		i.conflicts.Add(1)
	}
	return resp, err
}

// addEntry appends an entry to the pod's network-status as another
// writer would (read, change, update).
func addEntry(t *testing.T, kube kubernetes.Interface, name, entry string) {
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		pod, err := kube.CoreV1().Pods("default").Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		status := pod.Annotations[nadv1.NetworkStatusAnnot]
		pod.Annotations[nadv1.NetworkStatusAnnot] = strings.TrimSuffix(status, "]") + "," + entry + "]"
		_, err = kube.CoreV1().Pods("default").Update(context.Background(), pod, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Errorf("another writer's entry: %v", err)
	}
}

func createStatusPod(t *testing.T, kube kubernetes.Interface, name, status string) *corev1.Pod {
	t.Helper()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: corev1.PodSpec{NodeName: "node1", Containers: []corev1.Container{{Name: "c", Image: "example.invalid/c"}}}}
	if status != "" {
		pod.Annotations = map[string]string{nadv1.NetworkStatusAnnot: status}
	}
	created, err := kube.CoreV1().Pods("default").Create(context.Background(), pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return created
}

// otherWriter updates the pod every otherWriterPeriod (read, change,
// update with the resourceVersion read), as a busy controller would, until
// stopped. It runs at a rate, not flat out: a writer that updates the pod
// back to back on a loaded machine can win every race against raild's
// read-then-patch for a minute, which is a livelock no real writer of pod
// annotations causes (the deterministic conflict comes from the
// interposer).
func otherWriter(t *testing.T, kube kubernetes.Interface, name string) (stop func(), ticks, conflicts *int64) {
	var n, c int64
	update := func() bool {
		pod, err := kube.CoreV1().Pods("default").Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Errorf("other writer: %v", err)
			return false
		}
		pod.Annotations["example.com/tick"] = time.Now().Format(time.RFC3339Nano)
		_, err = kube.CoreV1().Pods("default").Update(context.Background(), pod, metav1.UpdateOptions{})
		switch {
		case err == nil:
			atomic.AddInt64(&n, 1)
		case apierrors.IsConflict(err):
			atomic.AddInt64(&c, 1)
		default:
			t.Errorf("other writer: %v", err)
			return false
		}
		return true
	}
	update() // one update before raild starts: the writer is already at work
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(otherWriterPeriod)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			if !update() {
				return
			}
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { close(done); wg.Wait() }) }, &n, &c
}
