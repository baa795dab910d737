package podreport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	nadv1 "github.com/k8snetworkplumbingwg/network-attachment-definition-client/pkg/apis/k8s.cni.cncf.io/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/client-go/util/workqueue"
)

// podKey is a pod the status writer has changes for.
type podKey struct {
	Namespace string
	Name      string
}

// podChanges are the entries to write into one pod's network-status, in
// order (a later change of a key wins), for the pod with that UID.
type podChanges struct {
	uid     string
	changes []entryChange
	gen     int
}

// errUnreadable marks an annotation rail will not rewrite: it cannot tell
// the others' entries apart, so it leaves them alone.
var errUnreadable = errors.New("unreadable network-status")

// statusWriter writes rail's entries into pods' network-status, one
// worker, retried with backoff per pod.
type statusWriter struct {
	pods        typedcorev1.PodsGetter
	queue       workqueue.TypedRateLimitingInterface[podKey]
	maxPods     int
	maxAttempts int
	metrics     *reportMetrics
	log         *slog.Logger

	mu      sync.Mutex
	pending map[podKey]*podChanges
}

func newStatusWriter(pods typedcorev1.PodsGetter, opt Options, m *reportMetrics, log *slog.Logger) *statusWriter {
	limiter := workqueue.NewTypedItemExponentialFailureRateLimiter[podKey](opt.RetryBase, opt.RetryMax)
	return &statusWriter{pods: pods, maxPods: opt.QueueSize, maxAttempts: opt.MaxAttempts, metrics: m, log: log,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(limiter,
			workqueue.TypedRateLimitingQueueConfig[podKey]{Name: "rail-network-status"}),
		pending: map[podKey]*podChanges{}}
}

// add queues changes for a pod; a pod with another UID than the one
// pending (same name, new pod) starts over.
func (w *statusWriter) add(pod podKey, uid string, changes []entryChange) {
	w.mu.Lock()
	p, ok := w.pending[pod]
	if !ok && len(w.pending) >= w.maxPods {
		w.mu.Unlock()
		w.metrics.dropped.WithLabelValues("network_status", "queue_full").Inc()
		w.log.Warn("network-status queue full, update dropped", "pod", pod.Namespace+"/"+pod.Name)
		return
	}
	if !ok || p.uid != uid {
		p = &podChanges{uid: uid}
		w.pending[pod] = p
	}
	p.changes = append(p.changes, changes...)
	p.gen++
	w.mu.Unlock()
	w.queue.Add(pod)
}

// run works the queue until ctx ends.
func (w *statusWriter) run(ctx context.Context) {
	go func() {
		<-ctx.Done()
		w.queue.ShutDown()
	}()
	for w.next(ctx) {
	}
}

func (w *statusWriter) next(ctx context.Context) bool {
	pod, quit := w.queue.Get()
	if quit {
		return false
	}
	defer w.queue.Done(pod)
	snap, ok := w.snapshot(pod)
	if !ok {
		w.queue.Forget(pod)
		return true
	}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error { return w.write(ctx, pod, snap) })
	switch {
	case err == nil:
		w.queue.Forget(pod)
		w.done(pod, snap.gen)
	case errors.Is(err, errUnreadable):
		w.giveUp(pod, snap.gen, "unreadable", err)
	case w.queue.NumRequeues(pod)+1 >= w.maxAttempts:
		w.metrics.errors.WithLabelValues("network_status").Inc()
		w.giveUp(pod, snap.gen, "gave_up", err)
	default:
		w.metrics.errors.WithLabelValues("network_status").Inc()
		w.log.Warn("writing network-status failed, will retry", "pod", pod.Namespace+"/"+pod.Name,
			"attempt", w.queue.NumRequeues(pod)+1, "error", err)
		w.queue.AddRateLimited(pod)
	}
	return true
}

func (w *statusWriter) snapshot(pod podKey) (podChanges, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	p, ok := w.pending[pod]
	if !ok {
		return podChanges{}, false
	}
	return podChanges{uid: p.uid, changes: append([]entryChange(nil), p.changes...), gen: p.gen}, true
}

// done forgets the changes written, unless newer ones came meanwhile (the
// queue has the pod again then).
func (w *statusWriter) done(pod podKey, gen int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if p, ok := w.pending[pod]; ok && p.gen == gen {
		delete(w.pending, pod)
	}
}

func (w *statusWriter) giveUp(pod podKey, gen int, why string, err error) {
	w.metrics.dropped.WithLabelValues("network_status", why).Inc()
	w.log.Error("network-status not written", "pod", pod.Namespace+"/"+pod.Name, "why", why, "error", err)
	w.queue.Forget(pod)
	w.done(pod, gen)
}

// write reads the pod, merges rail's changes into its network-status and
// patches it only if that changed, with the resourceVersion it read as a
// precondition (a concurrent writer makes it a Conflict, retried).
func (w *statusWriter) write(ctx context.Context, key podKey, snap podChanges) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	pods := w.pods.Pods(key.Namespace)
	pod, err := pods.Get(ctx, key.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) || (err == nil && snap.uid != "" && string(pod.UID) != snap.uid) {
		return nil // the pod is gone: nothing to say about it
	}
	if err != nil {
		return fmt.Errorf("get pod: %w", err)
	}
	list, err := parseStatus(pod.Annotations[nadv1.NetworkStatusAnnot])
	if err != nil {
		return fmt.Errorf("%w: %w", errUnreadable, err)
	}
	merged, changed, err := mergeStatus(list, snap.changes)
	if err != nil || !changed {
		return err
	}
	patch, err := statusPatch(pod.ResourceVersion, merged)
	if err != nil {
		return err
	}
	_, err = pods.Patch(ctx, key.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: fieldManager})
	return err
}

// fieldManager names raild as the writer of the annotation.
const fieldManager = "raild"

// statusPatch sets (or, with no entry left, removes) the annotation if the
// pod is still at resourceVersion.
func statusPatch(resourceVersion string, list []json.RawMessage) ([]byte, error) {
	var value any
	if len(list) > 0 {
		s, err := formatStatus(list)
		if err != nil {
			return nil, err
		}
		value = s
	}
	return json.Marshal(map[string]any{"metadata": map[string]any{
		"resourceVersion": resourceVersion,
		"annotations":     map[string]any{nadv1.NetworkStatusAnnot: value},
	}})
}
