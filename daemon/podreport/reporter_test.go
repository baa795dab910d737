package podreport

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	nadv1 "github.com/k8snetworkplumbingwg/network-attachment-definition-client/pkg/apis/k8s.cni.cncf.io/v1"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/railcni/rail/daemon/service"
	"github.com/railcni/rail/pkg/api"
)

// testPod is the pod the runtime named, with the primary's entry.
func testPod(annotation string) *corev1.Pod {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "u1"}}
	if annotation != "" {
		pod.Annotations = map[string]string{nadv1.NetworkStatusAnnot: annotation}
	}
	return pod
}

// startFake starts a Reporter on a fake clientset holding objs.
func startFake(t *testing.T, opt Options, objs ...runtime.Object) (*Reporter, *fake.Clientset) {
	t.Helper()
	kube := fake.NewClientset(objs...)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if opt.RetryBase == 0 {
		opt.RetryBase, opt.RetryMax = time.Millisecond, 10*time.Millisecond
	}
	opt.Registerer = prometheus.NewRegistry()
	r, err := Start(ctx, kube, opt)
	if err != nil {
		t.Fatal(err)
	}
	return r, kube
}

// waitFor polls cond until it holds (or fails the test after a long while:
// a condition, not a timing, is what is checked).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 5*time.Millisecond, 30*time.Second, true,
		func(context.Context) (bool, error) { return cond(), nil })
	if err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

func annotationOf(t *testing.T, kube *fake.Clientset) string {
	t.Helper()
	pod, err := kube.CoreV1().Pods("ns").Get(context.Background(), "p", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return pod.Annotations[nadv1.NetworkStatusAnnot]
}

func entries(t *testing.T, kube *fake.Clientset) string {
	t.Helper()
	list, err := parseStatus(annotationOf(t, kube))
	if err != nil {
		t.Fatal(err)
	}
	return summary(t, list)
}

func podEvents(t *testing.T, kube *fake.Clientset) []corev1.Event {
	t.Helper()
	list, err := kube.CoreV1().Events("ns").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return list.Items
}

// podActions counts the actions of a verb on pods.
func podActions(kube *fake.Clientset, verb string) int {
	n := 0
	for _, a := range kube.Actions() {
		if a.GetVerb() == verb && a.GetResource().Resource == "pods" {
			n++
		}
	}
	return n
}

func patches(kube *fake.Clientset) int  { return podActions(kube, "patch") }
func podReads(kube *fake.Clientset) int { return podActions(kube, "get") }

func twoRails() service.Attached {
	a := railAttach("rail0", "10.77.0.2/24")
	b := railAttach("rail1", "10.77.0.3/24")
	a.Interfaces = append(a.Interfaces, b.Interfaces...)
	return a
}

func TestChainedAttachThenRelease(t *testing.T) {
	r, kube := startFake(t, Options{NodeName: "node1"}, testPod("["+primary+"]"))
	r.Attached(twoRails())
	want := "k8s-pod-network/eth0=10.244.1.7 rail/rail0=10.77.0.2 rail/rail1=10.77.0.3"
	waitFor(t, "rail's entries", func() bool { return entries(t, kube) == want })
	waitFor(t, "two events", func() bool { return len(podEvents(t, kube)) == 2 })
	for _, e := range podEvents(t, kube) {
		if e.Type != corev1.EventTypeNormal || e.Reason != ReasonAttached || e.InvolvedObject.UID != "u1" ||
			e.InvolvedObject.Kind != "Pod" || e.Source.Component != "raild" || e.Source.Host != "node1" ||
			!strings.Contains(e.Message, "NIC mlx5_0") {
			t.Errorf("event = %+v", e)
		}
	}
	r.Attached(twoRails()) // a repeated report writes nothing new
	r.Released(service.Released{Pod: service.PodRef{Namespace: "ns", Name: "p", UID: "u1"}, Network: "rail",
		Interfaces: []service.ReleasedInterface{{Name: "rail0", Address: "10.77.0.2/24"}, {Name: "rail1", Address: "10.77.0.3/24"}}})
	waitFor(t, "the primary's entry alone", func() bool { return entries(t, kube) == "k8s-pod-network/eth0=10.244.1.7" })
	if !strings.Contains(annotationOf(t, kube), `"future-field": 1`) {
		t.Errorf("the primary's entry changed: %s", annotationOf(t, kube))
	}
	if n := patches(kube); n != 2 {
		t.Errorf("%d patches, want 2 (attach, release; the repeat changed nothing)", n)
	}
}

func TestConflictIsRetried(t *testing.T) {
	r, kube := startFake(t, Options{}, testPod("["+primary+"]"))
	var conflicts atomic.Int32
	kube.PrependReactor("patch", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		if conflicts.Add(1) <= 2 {
			return true, nil, apierrors.NewConflict(schema.GroupResource{Resource: "pods"}, "p", errors.New("the object has been modified"))
		}
		return false, nil, nil
	})
	r.Attached(railAttach("rail0", "10.77.0.2/24"))
	waitFor(t, "rail's entry", func() bool { return entries(t, kube) == "k8s-pod-network/eth0=10.244.1.7 rail/rail0=10.77.0.2" })
	if n := patches(kube); n != 3 {
		t.Errorf("%d patches, want 3 (two conflicts, then the write)", n)
	}
	if gets := podReads(kube); gets < 3 {
		t.Errorf("%d reads of the pod, want one per attempt (a conflict means re-read)", gets)
	}
	if v := testutil.ToFloat64(r.metrics.errors.WithLabelValues("network_status")); v != 0 {
		t.Errorf("conflicts counted as %v errors", v)
	}
}

func TestPatchCarriesResourceVersion(t *testing.T) {
	pod := testPod("[" + primary + "]")
	pod.ResourceVersion = "42"
	r, kube := startFake(t, Options{}, pod)
	var got atomic.Value
	kube.PrependReactor("patch", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		got.Store(string(a.(k8stesting.PatchAction).GetPatch()))
		return false, nil, nil
	})
	r.Attached(railAttach("rail0", "10.77.0.2/24"))
	waitFor(t, "a patch", func() bool { return got.Load() != nil })
	if p := got.Load().(string); !strings.Contains(p, `"resourceVersion":"42"`) {
		t.Fatalf("patch %s has no resourceVersion precondition", p)
	}
}

func TestNotChainedWritesNoStatus(t *testing.T) {
	r, kube := startFake(t, Options{}, testPod("["+primary+"]"))
	a := railAttach("net1", "10.77.0.2/24")
	a.Chained = false
	r.Attached(a)
	waitFor(t, "the event", func() bool { return len(podEvents(t, kube)) == 1 })
	for _, act := range kube.Actions() {
		if act.GetResource().Resource == "pods" {
			t.Fatalf("under Multus raild touched the pod: %v", act)
		}
	}
}

func TestRefusedRecordsWarning(t *testing.T) {
	r, kube := startFake(t, Options{}, testPod(""))
	r.Refused(service.Refused{Pod: service.PodRef{Namespace: "ns", Name: "p", UID: "u1"}, Network: "rail",
		Err: &api.Error{Code: api.CodePoolExhausted, Msg: "pool exhausted", Details: "pool rail: 2 of 2 used"}})
	waitFor(t, "the warning", func() bool { return len(podEvents(t, kube)) == 1 })
	e := podEvents(t, kube)[0]
	if e.Type != corev1.EventTypeWarning || e.Reason != ReasonPoolExhausted || !strings.Contains(e.Message, "pool rail: 2 of 2 used") {
		t.Fatalf("event = %+v", e)
	}
}

func TestStatusFailures(t *testing.T) {
	tests := []struct {
		name       string
		pod        runtime.Object
		getErr     error
		wantWhy    string // dropped reason; "" when nothing is dropped
		wantErrors float64
	}{
		{name: "pod gone", pod: nil},
		{name: "pod of another UID", pod: func() runtime.Object { p := testPod(""); p.UID = "u2"; return p }()},
		{name: "unreadable annotation", pod: testPod(`{"not":"a list"}`), wantWhy: "unreadable"},
		{name: "API down", pod: testPod(""), getErr: apierrors.NewInternalError(errors.New("etcd down")), wantWhy: "gave_up", wantErrors: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var objs []runtime.Object
			if tt.pod != nil {
				objs = append(objs, tt.pod)
			}
			r, kube := startFake(t, Options{MaxAttempts: 3}, objs...)
			if tt.getErr != nil {
				kube.PrependReactor("get", "pods", func(k8stesting.Action) (bool, runtime.Object, error) { return true, nil, tt.getErr })
			}
			r.Attached(railAttach("rail0", "10.77.0.2/24"))
			waitFor(t, "the writer to finish", func() bool {
				r.status.mu.Lock()
				defer r.status.mu.Unlock()
				return podReads(kube) > 0 && len(r.status.pending) == 0
			})
			if n := patches(kube); n != 0 {
				t.Errorf("%d patches, want none", n)
			}
			for _, why := range []string{"unreadable", "gave_up"} {
				want := 0.0
				if why == tt.wantWhy {
					want = 1
				}
				if v := testutil.ToFloat64(r.metrics.dropped.WithLabelValues("network_status", why)); v != want {
					t.Errorf("dropped %s = %v, want %v", why, v, want)
				}
			}
			if v := testutil.ToFloat64(r.metrics.errors.WithLabelValues("network_status")); v != tt.wantErrors {
				t.Errorf("errors = %v, want %v", v, tt.wantErrors)
			}
		})
	}
}

// A full queue drops the report and counts it; the caller never waits.
func TestFullQueuesDrop(t *testing.T) {
	m, err := newReportMetrics(nil)
	if err != nil {
		t.Fatal(err)
	}
	r := &Reporter{jobs: make(chan job, 1), metrics: m, log: Options{}.logger()}
	r.Attached(railAttach("rail0", "10.77.0.2/24"))
	r.Refused(service.Refused{Err: &api.Error{Code: api.CodeNoNIC}})
	r.Released(service.Released{})
	for kind, want := range map[string]float64{"attached": 0, "refused": 1, "released": 1} {
		if v := testutil.ToFloat64(m.dropped.WithLabelValues(kind, "queue_full")); v != want {
			t.Errorf("dropped %s = %v, want %v", kind, v, want)
		}
	}
	w := newStatusWriter(fake.NewClientset().CoreV1(), Options{QueueSize: 1, RetryBase: time.Millisecond, RetryMax: time.Millisecond}, m, Options{}.logger())
	defer w.queue.ShutDown()
	w.add(podKey{"ns", "a"}, "u1", nil)
	w.add(podKey{"ns", "a"}, "u1", nil) // same pod: merged, not dropped
	w.add(podKey{"ns", "b"}, "u2", nil)
	if v := testutil.ToFloat64(m.dropped.WithLabelValues("network_status", "queue_full")); v != 1 {
		t.Errorf("network_status queue_full = %v, want 1", v)
	}
}
