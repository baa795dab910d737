package podreport

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/railcni/rail/daemon/readiness"
)

// statusPatches records the pods/status statusPatches a fake clientset got.
type statusPatches struct {
	mu  sync.Mutex
	got []k8stesting.PatchAction
}

func (p *statusPatches) watch(kube *fake.Clientset) {
	kube.PrependReactor("patch", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if pa, ok := a.(k8stesting.PatchAction); ok && pa.GetSubresource() == "status" {
			p.mu.Lock()
			p.got = append(p.got, pa)
			p.mu.Unlock()
		}
		return false, nil, nil
	})
}

func (p *statusPatches) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.got)
}

func railCondition(t *testing.T, kube *fake.Clientset) (corev1.PodCondition, bool) {
	t.Helper()
	pod, err := kube.CoreV1().Pods("ns").Get(context.Background(), "p", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return currentCondition(pod)
}

func railEvents(t *testing.T, kube *fake.Clientset) []corev1.Event {
	t.Helper()
	list, err := kube.CoreV1().Events("ns").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []corev1.Event
	for _, e := range list.Items {
		if e.Reason == ReasonRDMADown {
			out = append(out, e)
		}
	}
	return out
}

func cond(ready, down bool, reason, msg string) readiness.Condition {
	return readiness.Condition{Namespace: "ns", Name: "p", UID: "u1", Ready: ready, Down: down, Reason: reason, Message: msg}
}

func TestConditionPatchShape(t *testing.T) {
	pod := testPod("")
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse}}
	r, kube := startFake(t, Options{}, pod)
	var seen statusPatches
	seen.watch(kube)
	r.RDMAReady(cond(true, false, readiness.ReasonReady, "5 check(s) passed"))
	waitFor(t, "the condition", func() bool { _, ok := railCondition(t, kube); return ok })
	seen.mu.Lock()
	pa := seen.got[0]
	seen.mu.Unlock()
	if pa.GetPatchType() != "application/strategic-merge-patch+json" {
		t.Fatalf("patch type %s", pa.GetPatchType())
	}
	var body struct {
		Metadata struct{ UID string } `json:"metadata"`
		Status   struct {
			Conditions []map[string]any `json:"conditions"`
		} `json:"status"`
	}
	if err := json.Unmarshal(pa.GetPatch(), &body); err != nil {
		t.Fatal(err)
	}
	c := body.Status.Conditions
	if body.Metadata.UID != "u1" || len(c) != 1 || c[0]["type"] != readiness.ConditionType || c[0]["status"] != "True" ||
		c[0]["reason"] != readiness.ReasonReady || c[0]["lastTransitionTime"] == nil {
		t.Fatalf("patch %s", pa.GetPatch())
	}
	got, _ := kube.CoreV1().Pods("ns").Get(context.Background(), "p", metav1.GetOptions{})
	if len(got.Status.Conditions) != 2 {
		t.Fatalf("conditions merged by type: %+v", got.Status.Conditions)
	}
}

// TestConditionFlips: True→False→True writes three conditions and one
// Warning Event; the transition time moves with the status only.
func TestConditionFlips(t *testing.T) {
	r, kube := startFake(t, Options{}, testPod(""))
	steps := []struct {
		c      readiness.Condition
		status corev1.ConditionStatus
		events int
	}{
		{cond(true, false, readiness.ReasonReady, "all passed"), corev1.ConditionTrue, 0},
		{cond(false, true, readiness.ReasonPortNotActive, "rail0: mlx5_0 port 1 is DOWN"), corev1.ConditionFalse, 1},
		{cond(false, false, readiness.ReasonPortNotActive, "rail0: mlx5_0 port 1 is INIT"), corev1.ConditionFalse, 1},
		{cond(true, false, readiness.ReasonReady, "all passed"), corev1.ConditionTrue, 1},
	}
	var lastTransition metav1.Time
	for i, st := range steps {
		before := lastTransition
		at := metav1.Unix(int64(1000*(i+1)), 0).Time
		r.conditions.now = func() time.Time { return at }
		r.RDMAReady(st.c)
		waitFor(t, "step "+st.c.Message, func() bool {
			c, ok := railCondition(t, kube)
			return ok && c.Status == st.status && c.Message == st.c.Message
		})
		c, _ := railCondition(t, kube)
		lastTransition = c.LastTransitionTime
		changed := i == 0 || steps[i-1].status != st.status
		if changed == lastTransition.Equal(&before) {
			t.Fatalf("step %d: transition time %v after %v (status changed: %v)", i, lastTransition, before, changed)
		}
		waitFor(t, "events", func() bool { return len(railEvents(t, kube)) == st.events })
		if ev := railEvents(t, kube); st.events > 0 && (ev[0].Type != corev1.EventTypeWarning || !strings.Contains(ev[0].Message, "port 1 is DOWN")) {
			t.Fatalf("event %+v", ev[0])
		}
	}
}

// TestConditionCoalesced: conditions queued while the writer is busy are
// written once, the latest.
func TestConditionCoalesced(t *testing.T) {
	r, kube := startFake(t, Options{}, testPod(""))
	var seen statusPatches
	seen.watch(kube)
	block := make(chan struct{})
	kube.PrependReactor("get", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		<-block
		return false, nil, nil
	})
	r.RDMAReady(cond(false, false, readiness.ReasonIfaceMissing, "first"))
	waitFor(t, "the writer to take the first", func() bool { return r.conditions.queue.Len() == 0 })
	for _, m := range []string{"second", "third", "fourth"} {
		r.RDMAReady(cond(false, false, readiness.ReasonIfaceMissing, m))
	}
	close(block)
	waitFor(t, "the last", func() bool { c, _ := railCondition(t, kube); return c.Message == "fourth" })
	if n := seen.count(); n != 2 {
		t.Fatalf("%d statusPatches, want 2 (the first, then only the latest)", n)
	}
}

// TestConditionSkipsOtherPod: a pod of the same name with another UID, or
// none, is not patched.
func TestConditionSkipsOtherPod(t *testing.T) {
	other := testPod("")
	other.UID = "u2"
	r, kube := startFake(t, Options{}, other)
	var seen statusPatches
	seen.watch(kube)
	r.RDMAReady(cond(false, false, readiness.ReasonIfaceMissing, "x"))
	r.RDMAReady(readiness.Condition{Namespace: "ns", Name: "gone", UID: "u3", Reason: "x"})
	waitFor(t, "the queue to drain", func() bool {
		r.conditions.mu.Lock()
		defer r.conditions.mu.Unlock()
		return len(r.conditions.pending) == 0
	})
	if seen.count() != 0 {
		t.Fatalf("%d statusPatches of another pod", seen.count())
	}
}
