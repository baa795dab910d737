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
	podQueue
	pods    typedcorev1.PodsGetter
	maxPods int

	mu      sync.Mutex
	pending map[podKey]*podChanges
}

func newStatusWriter(pods typedcorev1.PodsGetter, opt Options, m *reportMetrics, log *slog.Logger) *statusWriter {
	w := &statusWriter{pods: pods, maxPods: opt.QueueSize, pending: map[podKey]*podChanges{}}
	w.podQueue = newPodQueue("rail-network-status", "network_status", w.take, opt, m, log)
	return w
}

// add queues changes for a pod; a pod with another UID than the one
// pending (same name, new pod) starts over.
func (w *statusWriter) add(pod podKey, uid string, changes []entryChange) {
	w.mu.Lock()
	p, ok := w.pending[pod]
	if !ok && len(w.pending) >= w.maxPods {
		w.mu.Unlock()
		w.queueFull(pod)
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

// statusJob writes one snapshot of a pod's changes.
type statusJob struct {
	w    *statusWriter
	pod  podKey
	snap podChanges
}

func (j statusJob) write(ctx context.Context) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error { return j.w.write(ctx, j.pod, j.snap) })
}

func (j statusJob) settle() { j.w.done(j.pod, j.snap.gen) }

func (w *statusWriter) take(pod podKey) (podJob, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	p, ok := w.pending[pod]
	if !ok {
		return nil, false
	}
	return statusJob{w: w, pod: pod, snap: podChanges{uid: p.uid, changes: append([]entryChange(nil), p.changes...), gen: p.gen}}, true
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
