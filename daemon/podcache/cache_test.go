package podcache

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
)

const node = "kpods-node"

func testPod(name, uid, nodeName string, annotations map[string]string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: name, UID: types.UID(uid), Annotations: annotations,
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationUpdate}}},
		Spec: corev1.PodSpec{NodeName: nodeName, Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
	}
}

// startCache runs a cache over client until the test ends and waits for
// its first sync.
func startCache(t *testing.T, client *fake.Clientset, wait time.Duration, reg prometheus.Registerer) *Cache {
	t.Helper()
	c, err := New(client, node, Options{Wait: wait, Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { c.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	deadline := time.Now().Add(10 * time.Second)
	for c.Healthy() != nil {
		if time.Now().After(deadline) {
			t.Fatalf("cache not healthy: %v", c.Healthy())
		}
		time.Sleep(5 * time.Millisecond)
	}
	return c
}

func TestPodAnnotations(t *testing.T) {
	tests := []struct {
		name     string
		existing []runtime.Object
		later    *corev1.Pod // created after the lookup started
		uid      string
		wait     time.Duration
		want     map[string]string
		wantErr  string
	}{
		{name: "cached pod", existing: []runtime.Object{testPod("a", "u1", node, map[string]string{"rail.dev/pool": "decode"})},
			uid: "u1", want: map[string]string{"rail.dev/pool": "decode"}},
		{name: "no uid in the request", existing: []runtime.Object{testPod("a", "u1", node, map[string]string{"rail.dev/pool": "decode"})},
			want: map[string]string{"rail.dev/pool": "decode"}},
		{name: "pod without annotations gives an empty map", existing: []runtime.Object{testPod("a", "u1", node, nil)},
			uid: "u1", want: map[string]string{}},
		{name: "last-applied dropped", existing: []runtime.Object{testPod("a", "u1", node, map[string]string{lastApplied: "{...}", "x": "y"})},
			uid: "u1", want: map[string]string{"x": "y"}},
		{name: "pod created while the ADD waits", later: testPod("a", "u1", node, map[string]string{"rail.dev/gpus": "0"}),
			uid: "u1", wait: 10 * time.Second, want: map[string]string{"rail.dev/gpus": "0"}},
		{name: "pod never comes", uid: "u1", wait: 50 * time.Millisecond,
			wantErr: "pod ml/a: cannot read its annotations (the runtime passed none): not seen within kubernetes.podWait (50ms): the API server has no such pod"},
		{name: "recreated pod: old uid cached", existing: []runtime.Object{testPod("a", "old", node, map[string]string{"rail.dev/pool": "x"})},
			uid: "new", wait: 50 * time.Millisecond,
			wantErr: "the pod of that name on this node has UID old, the request names UID new (a recreated pod)"},
		{name: "new pod replaces the old while the ADD waits", existing: []runtime.Object{testPod("a", "old", node, map[string]string{"v": "old"})},
			later: testPod("a", "new", node, map[string]string{"v": "new"}), uid: "new", wait: 10 * time.Second,
			want: map[string]string{"v": "new"}},
		{name: "zero wait looks once", uid: "u1", wait: 0, wantErr: "not seen within kubernetes.podWait (0s)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client := fake.NewClientset(tt.existing...)
			c := startCache(t, client, tt.wait, nil)
			if tt.later != nil {
				go func() {
					time.Sleep(20 * time.Millisecond)
					pods := client.CoreV1().Pods("ml")
					if _, err := pods.Update(context.Background(), tt.later, metav1.UpdateOptions{}); err != nil {
						_, _ = pods.Create(context.Background(), tt.later, metav1.CreateOptions{})
					}
				}()
			}
			got, err := c.PodAnnotations(context.Background(), "ml", "a", tt.uid)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got == nil || len(got) != len(tt.want) {
				t.Fatalf("annotations = %#v, want %#v", got, tt.want)
			}
			for k, v := range tt.want {
				if got[k] != v {
					t.Errorf("annotations[%s] = %q, want %q", k, got[k], v)
				}
			}
		})
	}
}

// The pod is on another node. The fake API server ignores field
// selectors, so the informer never gets the pod here and only the GET
// that explains the miss finds it (on the real API server, see
// integration/kapi, the field selector keeps it out).
func TestMissingPodOnOtherNode(t *testing.T) {
	client := fake.NewClientset()
	c := startCache(t, client, 30*time.Millisecond, nil)
	client.PrependReactor("get", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, testPod("b", "u2", "other-node", nil), nil
	})
	_, err := c.PodAnnotations(context.Background(), "ml", "b", "u2")
	if err == nil || !strings.Contains(err.Error(), `the pod is not on this node (kpods-node) but on "other-node"`) {
		t.Fatalf("err = %v", err)
	}
}

func TestStripKeepsWhatRaildReads(t *testing.T) {
	pod := testPod("a", "u1", node, map[string]string{"k": "v", lastApplied: "big"})
	pod.OwnerReferences = []metav1.OwnerReference{{Kind: "DaemonSet", Name: "rail", UID: "ds"}}
	pod.Status.Phase = corev1.PodRunning
	out, err := strip(pod)
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*corev1.Pod)
	if got.Name != "a" || got.Namespace != "ml" || got.UID != "u1" || got.Spec.NodeName != node || got.Annotations["k"] != "v" ||
		len(got.OwnerReferences) != 1 {
		t.Errorf("lost a field raild reads: %+v", got)
	}
	if got.ManagedFields != nil || len(got.Spec.Containers) != 0 || got.Status.Phase != "" || got.Annotations[lastApplied] != "" {
		t.Errorf("kept a field raild does not read: %+v", got)
	}
	if pod.Annotations[lastApplied] != "big" {
		t.Error("strip changed the informer's input annotations map")
	}
	tomb := cache.DeletedFinalStateUnknown{Key: "ml/a"}
	if out, _ := strip(tomb); out != tomb {
		t.Error("a tombstone must pass through")
	}
}

func TestFailingAPIServer(t *testing.T) {
	client := fake.NewClientset(testPod("a", "u1", node, map[string]string{"k": "v"}))
	reg := prometheus.NewRegistry()
	c := startCache(t, client, 10*time.Second, reg)
	if got := gaugeValue(t, reg, "rail_apiserver_up"); got != 1 {
		t.Fatalf("rail_apiserver_up = %v while healthy", got)
	}
	broken := errors.New("connection refused")
	// What the informer's list and watch report when they fail (the
	// real path is exercised against a stopped API server in integration/kapi).
	c.health.attempt(broken)
	if err := c.Healthy(); err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("Healthy = %v", err)
	}
	if got := gaugeValue(t, reg, "rail_apiserver_up"); got != 0 {
		t.Errorf("rail_apiserver_up = %v while failing", got)
	}
	// The wait is 10s: the error says the connection fails, not that
	// the pod was not seen, so the lookup did not wait.
	_, err := c.PodAnnotations(context.Background(), "ml", "missing", "u9")
	if err == nil || !strings.Contains(err.Error(), "raild's connection to the API server fails") {
		t.Fatalf("err = %v", err)
	}
	// A cached pod is still served: its annotations were read before.
	if got, err := c.PodAnnotations(context.Background(), "ml", "a", "u1"); err != nil || got["k"] != "v" {
		t.Errorf("cached pod while failing: %v %v", got, err)
	}
	c.health.attempt(nil)
	if err := c.Healthy(); err != nil {
		t.Errorf("a successful watch should restore health: %v", err)
	}
}

func gaugeValue(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == name {
			return f.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatalf("%s not registered", name)
	return 0
}
