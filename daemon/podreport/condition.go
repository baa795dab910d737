package podreport

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/railcni/rail/daemon/readiness"
)

// ReasonRDMADown is the Warning Event of a pod whose RDMA path broke.
const ReasonRDMADown = "RailRDMADown"

// RDMAReady queues a pod's rail.dev/RDMAReady condition (the latest one
// per pod wins) and records a Warning Event when its RDMA path broke.
func (r *Reporter) RDMAReady(c readiness.Condition) {
	if c.Down {
		r.events.Event(&corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: c.Namespace, Name: c.Name, UID: types.UID(c.UID)},
			corev1.EventTypeWarning, ReasonRDMADown, c.Message)
	}
	r.conditions.add(c)
}

var _ readiness.Sink = (*Reporter)(nil)

// conditionWriter writes pods' rail.dev/RDMAReady through pods/status, one
// worker, the latest condition of each pod only, retried with backoff.
type conditionWriter struct {
	podQueue
	pods    typedcorev1.PodsGetter
	maxPods int
	now     func() time.Time

	mu      sync.Mutex
	pending map[podKey]readiness.Condition
}

func newConditionWriter(pods typedcorev1.PodsGetter, opt Options, m *reportMetrics, log *slog.Logger) *conditionWriter {
	w := &conditionWriter{pods: pods, maxPods: opt.QueueSize, now: time.Now, pending: map[podKey]readiness.Condition{}}
	w.podQueue = newPodQueue("rail-rdma-ready", "rdma_ready", w.take, opt, m, log)
	return w
}

func (w *conditionWriter) add(c readiness.Condition) {
	key := podKey{c.Namespace, c.Name}
	w.mu.Lock()
	if _, ok := w.pending[key]; !ok && len(w.pending) >= w.maxPods {
		w.mu.Unlock()
		w.queueFull(key)
		return
	}
	w.pending[key] = c
	w.mu.Unlock()
	w.queue.Add(key)
}

// conditionJob writes one condition of a pod.
type conditionJob struct {
	w    *conditionWriter
	pod  podKey
	cond readiness.Condition
}

func (j conditionJob) write(ctx context.Context) error { return j.w.write(ctx, j.pod, j.cond) }
func (j conditionJob) settle()                         { j.w.done(j.pod, j.cond) }

func (w *conditionWriter) take(pod podKey) (podJob, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	c, ok := w.pending[pod]
	return conditionJob{w: w, pod: pod, cond: c}, ok
}

// done forgets the condition written, unless a newer one came meanwhile
// (the queue has the pod again then).
func (w *conditionWriter) done(key podKey, written readiness.Condition) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if c, ok := w.pending[key]; ok && c == written {
		delete(w.pending, key)
	}
}

// write reads the pod and patches its status when the condition differs
// from what it holds; the pod's UID is a precondition of the patch.
func (w *conditionWriter) write(ctx context.Context, key podKey, c readiness.Condition) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	pods := w.pods.Pods(key.Namespace)
	pod, err := pods.Get(ctx, key.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) || (err == nil && c.UID != "" && string(pod.UID) != c.UID) {
		return nil // the pod is gone
	}
	if err != nil {
		return fmt.Errorf("get pod: %w", err)
	}
	cond := podCondition(c, w.now())
	if old, ok := currentCondition(pod); ok {
		if old.Status == cond.Status && old.Reason == cond.Reason && old.Message == cond.Message {
			return nil
		}
		if old.Status == cond.Status {
			cond.LastTransitionTime = old.LastTransitionTime
		}
	}
	patch, err := conditionPatch(string(pod.UID), cond)
	if err != nil {
		return err
	}
	_, err = pods.Patch(ctx, key.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{FieldManager: fieldManager}, "status")
	return err
}

func podCondition(c readiness.Condition, now time.Time) corev1.PodCondition {
	status := corev1.ConditionFalse
	if c.Ready {
		status = corev1.ConditionTrue
	}
	return corev1.PodCondition{Type: readiness.ConditionType, Status: status, Reason: c.Reason, Message: c.Message,
		LastTransitionTime: metav1.NewTime(now.Truncate(time.Second))}
}

func currentCondition(pod *corev1.Pod) (corev1.PodCondition, bool) {
	for _, c := range pod.Status.Conditions {
		if c.Type == readiness.ConditionType {
			return c, true
		}
	}
	return corev1.PodCondition{}, false
}

// conditionPatch is a strategic-merge patch of pods/status: conditions
// merge by type, so only rail's is set; the UID makes a patch of a new pod
// of the same name fail.
func conditionPatch(uid string, c corev1.PodCondition) ([]byte, error) {
	return json.Marshal(map[string]any{
		"metadata": map[string]any{"uid": uid},
		"status":   map[string]any{"conditions": []corev1.PodCondition{c}},
	})
}
