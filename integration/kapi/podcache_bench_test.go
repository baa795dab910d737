package kapi_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/railcni/rail/daemon/kubeclient"
	"github.com/railcni/rail/daemon/podcache"
	"github.com/railcni/rail/integration/kapi"
	"github.com/railcni/rail/pkg/api"
)

// BenchmarkPodAnnotations: what an ADD pays for the annotations of its
// pod: a lookup in raild's pod cache, or a GET to the API server (what
// raild would pay without the informer). Run with
// RAIL_KAPI_BIN=... go test -run - -bench PodAnnotations ./integration/kapi/
func BenchmarkPodAnnotations(b *testing.B) {
	s := kapi.Start(b)
	pod := createPod(b, s.Clients.Kube, kpodsPod("bench", kpodsNode, map[string]string{"rail.dev/pool": "decode"}))
	c := runCache(b, s.Clients, time.Second)
	ctx := context.Background()
	b.Run("informer", func(b *testing.B) {
		for b.Loop() {
			if got, err := c.PodAnnotations(ctx, "default", "bench", string(pod.UID)); err != nil || got["rail.dev/pool"] != "decode" {
				b.Fatalf("%v %v", got, err)
			}
		}
	})
	unthrottled := *s.Config
	unthrottled.QPS = -1 // no client-side rate limit: the API server's own latency
	for _, tc := range []struct {
		name string
		cfg  *rest.Config
	}{{"get", s.Config}, {"get-unthrottled", &unthrottled}} {
		clients, err := kubeclient.New(tc.cfg, "kpods-bench")
		if err != nil {
			b.Fatal(err)
		}
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				got, err := clients.Kube.CoreV1().Pods("default").Get(ctx, "bench", metav1.GetOptions{})
				if err != nil || got.Annotations["rail.dev/pool"] != "decode" {
					b.Fatalf("%v", err)
				}
			}
		})
	}
}

// BenchmarkPodCacheMemory: the heap a node's pod informer holds for 500
// pods of a realistic shape (two containers with env and resources,
// kubectl's last-applied annotation, server-side managed fields), with
// raild's transform (podcache) and without it (a plain informer).
func BenchmarkPodCacheMemory(b *testing.B) {
	const pods = 500
	s := kapi.Start(b)
	for i := range pods {
		createPod(b, s.Clients.Kube, realisticPod(i))
	}
	b.Run("podcache", func(b *testing.B) {
		for b.Loop() {
			b.ReportMetric(heapHeld(b, func(ctx context.Context) func() int {
				c, err := podcache.New(s.Clients.Watch, kpodsNode, podcache.Options{Wait: time.Second})
				if err != nil {
					b.Fatal(err)
				}
				go c.Run(ctx)
				return c.Len
			})/pods, "B/pod")
		}
	})
	b.Run("plain-informer", func(b *testing.B) {
		for b.Loop() {
			b.ReportMetric(heapHeld(b, func(ctx context.Context) func() int {
				f := informers.NewSharedInformerFactoryWithOptions(s.Clients.Watch, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
					o.FieldSelector = fields.OneTermEqualSelector("spec.nodeName", kpodsNode).String()
				}))
				inf := f.Core().V1().Pods().Informer()
				f.Start(ctx.Done())
				cache.WaitForCacheSync(ctx.Done(), inf.HasSynced)
				return func() int { return len(inf.GetStore().ListKeys()) }
			})/pods, "B/pod")
		}
	})
}

// heapHeld starts an informer, waits until it holds every pod and returns
// the growth of the live heap, measured after GC with the informer alive.
func heapHeld(b *testing.B, start func(context.Context) func() int) float64 {
	b.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	before := liveHeap()
	count := start(ctx)
	waitFor(b, "informer holds every pod", func() error {
		if n := count(); n != 500 {
			return fmt.Errorf("%d pods", n)
		}
		return nil
	})
	after := liveHeap()
	runtime.KeepAlive(count)
	return float64(after) - float64(before)
}

func liveHeap() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

func realisticPod(i int) *corev1.Pod {
	env := make([]corev1.EnvVar, 12)
	for j := range env {
		env[j] = corev1.EnvVar{Name: fmt.Sprintf("SETTING_%d", j), Value: strings.Repeat("v", 24)}
	}
	container := func(name string) corev1.Container {
		return corev1.Container{Name: name, Image: "registry.example/team/model-server:2026.11.1", Env: env,
			Args: []string{"--model=/models/llm", "--tensor-parallel=8", "--port=8000"},
			Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{
				"nvidia.com/gpu": resource.MustParse("8"), corev1.ResourceMemory: resource.MustParse("64Gi")}},
			VolumeMounts: []corev1.VolumeMount{{Name: "models", MountPath: "/models"}}}
	}
	pod := kpodsPod(fmt.Sprintf("worker-%03d", i), kpodsNode, map[string]string{
		"rail.dev/pool": "decode",
		"kubectl.kubernetes.io/last-applied-configuration": strings.Repeat("x", 2000),
	})
	pod.Labels = map[string]string{"app": "llm", "role": "decode", "pod-template-hash": "5d8f7c9b6"}
	pod.Spec.Containers = []corev1.Container{container("server"), container("sidecar")}
	pod.Spec.Volumes = []corev1.Volume{{Name: "models", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	return pod
}

// BenchmarkRaildADD: an ADD through raild's socket (address only, so the
// figure is raild's, not netlink's) whose runtime passed the annotations
// vs one whose annotations come from raild's pod informer. Each ADD is
// released untimed.
func BenchmarkRaildADD(b *testing.B) {
	s := kapi.Start(b)
	r := startRaild(b, nil, "--kubeconfig", s.Kubeconfig)
	annotations := map[string]string{"rail.dev/pool": "decode"}
	pod := createPod(b, s.Clients.Kube, kpodsPod("bench-add", kpodsNode, annotations))
	waitFor(b, "/readyz", func() error {
		if code, body := r.readyz(b); code != 200 {
			return fmt.Errorf("%d %s", code, body)
		}
		return nil
	})
	ctx := context.Background()
	for _, tc := range []struct {
		name        string
		annotations map[string]string
	}{{"runtime-annotations", annotations}, {"informer", nil}} {
		b.Run(tc.name, func(b *testing.B) {
			for range b.N {
				plan, err := r.add("sb-bench", "bench-add", string(pod.UID), tc.annotations)
				if err != nil || plan.Interfaces[0].Pool != "decode" {
					b.Fatalf("ADD: %+v %v", plan, err)
				}
				b.StopTimer()
				if err := r.client.Release(ctx, api.AttachmentRequest{Sandbox: "sb-bench", CNIIfName: "net1", Network: "rail"}); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
		})
	}
}
