package podreport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/util/workqueue"

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
	pods        typedcorev1.PodsGetter
	queue       workqueue.TypedRateLimitingInterface[podKey]
	maxPods     int
	maxAttempts int
	metrics     *reportMetrics
	log         *slog.Logger
	now         func() time.Time

	mu      sync.Mutex
	pending map[podKey]readiness.Condition
}

func newConditionWriter(pods typedcorev1.PodsGetter, opt Options, m *reportMetrics, log *slog.Logger) *conditionWriter {
	limiter := workqueue.NewTypedItemExponentialFailureRateLimiter[podKey](opt.RetryBase, opt.RetryMax)
	return &conditionWriter{pods: pods, maxPods: opt.QueueSize, maxAttempts: opt.MaxAttempts, metrics: m, log: log, now: time.Now,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(limiter,
			workqueue.TypedRateLimitingQueueConfig[podKey]{Name: "rail-rdma-ready"}),
		pending: map[podKey]readiness.Condition{}}
}

func (w *conditionWriter) add(c readiness.Condition) {
	key := podKey{c.Namespace, c.Name}
	w.mu.Lock()
	if _, ok := w.pending[key]; !ok && len(w.pending) >= w.maxPods {
		w.mu.Unlock()
		w.metrics.dropped.WithLabelValues("rdma_ready", "queue_full").Inc()
		w.log.Warn("RDMAReady queue full, condition dropped", "pod", key.Namespace+"/"+key.Name)
		return
	}
	w.pending[key] = c
	w.mu.Unlock()
	w.queue.Add(key)
}

func (w *conditionWriter) run(ctx context.Context) {
	go func() {
		<-ctx.Done()
		w.queue.ShutDown()
	}()
	for w.next(ctx) {
	}
}

func (w *conditionWriter) next(ctx context.Context) bool {
	key, quit := w.queue.Get()
	if quit {
		return false
	}
	defer w.queue.Done(key)
	w.mu.Lock()
	c, ok := w.pending[key]
	w.mu.Unlock()
	if !ok {
		w.queue.Forget(key)
		return true
	}
	err := w.write(ctx, key, c)
	switch {
	case err == nil:
		w.queue.Forget(key)
		w.done(key, c)
	case w.queue.NumRequeues(key)+1 >= w.maxAttempts:
		w.metrics.errors.WithLabelValues("rdma_ready").Inc()
		w.metrics.dropped.WithLabelValues("rdma_ready", "gave_up").Inc()
		w.log.Error("RDMAReady not written", "pod", key.Namespace+"/"+key.Name, "error", err)
		w.queue.Forget(key)
		w.done(key, c)
	default:
		w.metrics.errors.WithLabelValues("rdma_ready").Inc()
		w.log.Warn("writing RDMAReady failed, will retry", "pod", key.Namespace+"/"+key.Name,
			"attempt", w.queue.NumRequeues(key)+1, "error", err)
		w.queue.AddRateLimited(key)
	}
	return true
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
	if apierrors.IsConflict(err) {
		return errors.Join(err, errors.New("the pod changed under the patch"))
	}
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
