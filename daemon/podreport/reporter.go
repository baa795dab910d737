// Package podreport tells the cluster what raild did for each pod: an
// Event per interface attached (its NIC, the NIC's distance class to each
// of the pod's GPUs, its address) or per attachment refused (why, and the
// fix), and, in chained mode, rail's interfaces in the pod's
// k8s.v1.cni.cncf.io/network-status annotation, and each rail pod's
// rail.dev/RDMAReady condition (a Warning Event RailRDMADown when it
// breaks). Nothing here ever slows or fails a CNI call: reports go through
// a bounded queue to a worker, and what does not fit is dropped and counted.
package podreport

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/record"

	"github.com/railcni/rail/daemon/service"
)

// Options configure a Reporter; zero values take the defaults.
type Options struct {
	NodeName    string // the Events' source host
	QueueSize   int    // reports waiting for the worker, and pods with unwritten network-status (default 256)
	RetryBase   time.Duration
	RetryMax    time.Duration // network-status retries back off from RetryBase to RetryMax (default 500ms, 1m)
	MaxAttempts int           // network-status writes per change before it is dropped (default 10)
	// EventRetry is how long client-go's event broadcaster waits between
	// attempts to write one Event (default its own, 10s).
	EventRetry time.Duration
	Registerer prometheus.Registerer // nil: counted, not exported
	Log        *slog.Logger
}

func (o *Options) defaults() {
	if o.QueueSize <= 0 {
		o.QueueSize = 256
	}
	if o.RetryBase <= 0 {
		o.RetryBase = 500 * time.Millisecond
	}
	if o.RetryMax <= 0 {
		o.RetryMax = time.Minute
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 10
	}
	o.Log = o.logger()
}

func (o Options) logger() *slog.Logger {
	if o.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return o.Log
}

// job is one report waiting for the worker.
type job struct {
	attached *service.Attached
	refused  *service.Refused
	released *service.Released
}

// Reporter implements service.Reporter against the API server.
type Reporter struct {
	jobs   chan job
	events record.EventRecorder
	status *statusWriter
	// conditions writes rail.dev/RDMAReady.
	conditions *conditionWriter
	metrics    *reportMetrics
	log        *slog.Logger
}

var _ service.Reporter = (*Reporter)(nil)

// Start builds a Reporter on kube and runs its workers until ctx ends.
func Start(ctx context.Context, kube kubernetes.Interface, opt Options) (*Reporter, error) {
	opt.defaults()
	m, err := newReportMetrics(opt.Registerer)
	if err != nil {
		return nil, fmt.Errorf("pod report metrics: %w", err)
	}
	bopts := []record.BroadcasterOption{record.WithContext(ctx)}
	if opt.EventRetry > 0 {
		bopts = append(bopts, record.WithSleepDuration(opt.EventRetry))
	}
	broadcaster := record.NewBroadcaster(bopts...)
	broadcaster.StartRecordingToSink(newEventSink(kube.CoreV1().Events(""), m, opt.Log))
	r := &Reporter{
		jobs:       make(chan job, opt.QueueSize),
		events:     broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: fieldManager, Host: opt.NodeName}),
		status:     newStatusWriter(kube.CoreV1(), opt, m, opt.Log),
		conditions: newConditionWriter(kube.CoreV1(), opt, m, opt.Log),
		metrics:    m,
		log:        opt.Log,
	}
	go r.status.run(ctx)
	go r.conditions.run(ctx)
	go r.work(ctx)
	return r, nil
}

// Attached queues the Events (and, chained, the network-status entries) of
// an attachment.
func (r *Reporter) Attached(a service.Attached) { r.enqueue(job{attached: &a}, "attached") }

// Refused queues the Warning Event of a refused attachment.
func (r *Reporter) Refused(f service.Refused) { r.enqueue(job{refused: &f}, "refused") }

// Released queues the removal of an attachment's network-status entries.
func (r *Reporter) Released(d service.Released) { r.enqueue(job{released: &d}, "released") }

func (r *Reporter) enqueue(j job, kind string) {
	select {
	case r.jobs <- j:
	default:
		r.metrics.dropped.WithLabelValues(kind, "queue_full").Inc()
		r.log.Warn("pod report queue full, report dropped", "report", kind)
	}
}

func (r *Reporter) work(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case j := <-r.jobs:
			r.handle(j)
		}
	}
}

// handle turns one report into Events (client-go's broadcaster queues,
// aggregates and writes them) and network-status changes.
func (r *Reporter) handle(j job) {
	switch {
	case j.attached != nil:
		a := j.attached
		for _, n := range attachedNotes(*a) {
			r.events.Event(podObject(a.Pod), n.Type, n.Reason, n.Message)
		}
		if !a.Chained {
			return // under Multus, Multus writes network-status from rail's result
		}
		changes, err := attachedEntries(*a)
		if err != nil {
			r.metrics.dropped.WithLabelValues("network_status", "unreadable").Inc()
			r.log.Error("network-status entries not built", "pod", a.Pod.Namespace+"/"+a.Pod.Name, "error", err)
			return
		}
		r.status.add(podKey{a.Pod.Namespace, a.Pod.Name}, a.Pod.UID, changes)
	case j.refused != nil:
		n := refusedNote(*j.refused)
		r.events.Event(podObject(j.refused.Pod), n.Type, n.Reason, n.Message)
	case j.released != nil:
		d := j.released
		r.status.add(podKey{d.Pod.Namespace, d.Pod.Name}, d.Pod.UID, releasedEntries(*d))
	}
}
