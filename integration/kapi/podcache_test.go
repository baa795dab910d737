package kapi_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/railcni/rail/daemon/kubeclient"
	"github.com/railcni/rail/daemon/podcache"
	"github.com/railcni/rail/integration/kapi"
)

const kpodsNode = "kpods-node-1"

func kpodsPod(name, node string, annotations map[string]string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, Annotations: annotations},
		Spec:       corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "main", Image: "registry.example/app:1"}}},
	}
}

func createPod(t testing.TB, client kubernetes.Interface, pod *corev1.Pod) *corev1.Pod {
	t.Helper()
	got, err := client.CoreV1().Pods(pod.Namespace).Create(context.Background(), pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create pod %s: %v", pod.Name, err)
	}
	return got
}

func deletePod(t testing.TB, client kubernetes.Interface, name string) {
	t.Helper()
	zero := int64(0)
	if err := client.CoreV1().Pods("default").Delete(context.Background(), name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatalf("delete pod %s: %v", name, err)
	}
}

// runCache runs a pod cache of kpodsNode until the test ends and waits
// until it is healthy.
func runCache(t testing.TB, clients *kubeclient.Clients, wait time.Duration) *podcache.Cache {
	t.Helper()
	c, err := podcache.New(clients.Watch, kpodsNode, podcache.Options{Wait: wait, Get: clients.Kube})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { c.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	waitFor(t, "pod cache healthy", func() error { return c.Healthy() })
	return c
}

// waitFor polls check until it returns nil (30s at most: a failure, not a measure).
func waitFor(t testing.TB, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestPodCacheAgainstAPIServer: the node's pod cache on a real API server.
func TestPodCacheAgainstAPIServer(t *testing.T) {
	s := kapi.Start(t)
	kube := s.Clients.Kube
	cache := runCache(t, s.Clients, 10*time.Second)
	ctx := context.Background()

	t.Run("pod created after the lookup started is waited for", func(t *testing.T) {
		go func() {
			time.Sleep(300 * time.Millisecond)
			pod := kpodsPod("late", kpodsNode, map[string]string{"rail.dev/pool": "decode"})
			if _, err := kube.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
				t.Errorf("create pod: %v", err)
			}
		}()
		got, err := cache.PodAnnotations(ctx, "default", "late", "")
		if err != nil || got["rail.dev/pool"] != "decode" {
			t.Fatalf("annotations = %v, %v", got, err)
		}
	})
	t.Run("pod on another node is not seen", func(t *testing.T) {
		other := createPod(t, kube, kpodsPod("elsewhere", "kpods-node-2", map[string]string{"rail.dev/pool": "x"}))
		short := runCache(t, s.Clients, 500*time.Millisecond)
		_, err := short.PodAnnotations(ctx, "default", "elsewhere", string(other.UID))
		if err == nil || !strings.Contains(err.Error(), `the pod is not on this node (kpods-node-1) but on "kpods-node-2"`) {
			t.Fatalf("err = %v", err)
		}
		if n := short.Len(); n != 1 { // "late" only
			t.Errorf("cache holds %d pods, want 1 (field selector spec.nodeName)", n)
		}
	})
	t.Run("uid mismatch: a recreated pod does not lend its annotations", func(t *testing.T) {
		old := createPod(t, kube, kpodsPod("again", kpodsNode, map[string]string{"v": "old"}))
		short := runCache(t, s.Clients, 500*time.Millisecond)
		if got, err := short.PodAnnotations(ctx, "default", "again", string(old.UID)); err != nil || got["v"] != "old" {
			t.Fatalf("old pod: %v, %v", got, err)
		}
		_, err := short.PodAnnotations(ctx, "default", "again", "00000000-0000-0000-0000-000000000001")
		if err == nil || !strings.Contains(err.Error(), "a recreated pod") {
			t.Fatalf("err = %v, want a UID mismatch", err)
		}
		deletePod(t, kube, "again")
		fresh := createPod(t, kube, kpodsPod("again", kpodsNode, map[string]string{"v": "new"}))
		got, err := cache.PodAnnotations(ctx, "default", "again", string(fresh.UID))
		if err != nil || got["v"] != "new" {
			t.Fatalf("recreated pod: %v, %v", got, err)
		}
	})
}

// TestWatchClientKeepsItsStream: Clients.Kube bounds every request by
// Config.Timeout, a watch's stream included; Clients.Watch does not, so
// an informer on it keeps one stream instead of reconnecting every 10s.
func TestWatchClientKeepsItsStream(t *testing.T) {
	s := kapi.Start(t)
	cfg := *s.Config
	cfg.Timeout = 500 * time.Millisecond
	clients, err := kubeclient.New(&cfg, "kpods-test")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	bounded, err := clients.Kube.CoreV1().Pods("default").Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer bounded.Stop()
	unbounded, err := clients.Watch.CoreV1().Pods("default").Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer unbounded.Stop()
	for range bounded.ResultChan() { // ends when the client's timeout cuts the stream
	}
	createPod(t, s.Clients.Kube, kpodsPod("after-timeout", kpodsNode, nil))
	select {
	case ev, ok := <-unbounded.ResultChan():
		if !ok || ev.Type != watch.Added {
			t.Fatalf("watch through Clients.Watch: event %v (open %v), want the pod added after the timeout", ev.Type, ok)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no event on the unbounded watch")
	}
}
