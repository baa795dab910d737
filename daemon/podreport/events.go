package podreport

import (
	"log/slog"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"

	"github.com/railcni/rail/daemon/service"
)

// podObject is the reference an Event regards: the pod as the runtime
// named it, so recording costs no API read.
func podObject(p service.PodRef) *corev1.ObjectReference {
	return &corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: p.Namespace, Name: p.Name, UID: types.UID(p.UID)}
}

// countingSink is the API's event sink that counts and logs what the API
// server refused; client-go's broadcaster queues, aggregates, rate-limits
// and retries in front of it.
type countingSink struct {
	inner   record.EventSink
	metrics *reportMetrics
	log     *slog.Logger
}

func newEventSink(events typedcorev1.EventInterface, m *reportMetrics, log *slog.Logger) *countingSink {
	return &countingSink{inner: &typedcorev1.EventSinkImpl{Interface: events}, metrics: m, log: log}
}

func (s *countingSink) Create(e *corev1.Event) (*corev1.Event, error) {
	out, err := s.inner.Create(e)
	return out, s.failed("create", e, err)
}

func (s *countingSink) Update(e *corev1.Event) (*corev1.Event, error) {
	out, err := s.inner.Update(e)
	return out, s.failed("update", e, err)
}

func (s *countingSink) Patch(e *corev1.Event, data []byte) (*corev1.Event, error) {
	out, err := s.inner.Patch(e, data)
	return out, s.failed("patch", e, err)
}

// failed counts and logs err; a patch of an event the server no longer
// has is not a failure (the broadcaster creates it anew).
func (s *countingSink) failed(verb string, e *corev1.Event, err error) error {
	if err != nil && !(verb == "patch" && apierrors.IsNotFound(err)) {
		s.metrics.errors.WithLabelValues("event").Inc()
		s.log.Warn("recording an event failed", "verb", verb, "pod", e.InvolvedObject.Namespace+"/"+e.InvolvedObject.Name,
			"reason", e.Reason, "error", err)
	}
	return err
}
