package podreport

import (
	"context"
	"errors"
	"log/slog"
	"strings"

	"k8s.io/client-go/util/workqueue"
)

// podJob is one write a podQueue makes for a pod.
type podJob interface {
	write(ctx context.Context) error
	// settle forgets what the job wrote (or gave up on), unless newer work
	// came for the pod meanwhile.
	settle()
}

// podQueue works pods one at a time and retries a failed pod with backoff
// up to maxAttempts: what the network-status and RDMAReady writers share.
type podQueue struct {
	queue       workqueue.TypedRateLimitingInterface[podKey]
	take        func(podKey) (podJob, bool) // the pod's pending work (false: none)
	maxAttempts int
	what        string // the metrics' label
	shown       string // the logs' name: the queue's name without "rail-"
	metrics     *reportMetrics
	log         *slog.Logger
}

func newPodQueue(name, what string, take func(podKey) (podJob, bool), opt Options, m *reportMetrics, log *slog.Logger) podQueue {
	limiter := workqueue.NewTypedItemExponentialFailureRateLimiter[podKey](opt.RetryBase, opt.RetryMax)
	return podQueue{take: take, maxAttempts: opt.MaxAttempts, what: what, shown: strings.TrimPrefix(name, "rail-"), metrics: m, log: log,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(limiter, workqueue.TypedRateLimitingQueueConfig[podKey]{Name: name})}
}

// queueFull counts and logs work dropped because maxPods pods wait.
func (q *podQueue) queueFull(pod podKey) {
	q.metrics.dropped.WithLabelValues(q.what, "queue_full").Inc()
	q.log.Warn(q.shown+" queue full, update dropped", "pod", pod.Namespace+"/"+pod.Name)
}

// run works the queue until ctx ends.
func (q *podQueue) run(ctx context.Context) {
	go func() {
		<-ctx.Done()
		q.queue.ShutDown()
	}()
	for q.next(ctx) {
	}
}

func (q *podQueue) next(ctx context.Context) bool {
	pod, quit := q.queue.Get()
	if quit {
		return false
	}
	defer q.queue.Done(pod)
	job, ok := q.take(pod)
	if !ok {
		q.queue.Forget(pod)
		return true
	}
	err := job.write(ctx)
	switch {
	case err == nil:
		q.queue.Forget(pod)
		job.settle()
	case errors.Is(err, errUnreadable):
		q.giveUp(pod, job, "unreadable", err)
	case q.queue.NumRequeues(pod)+1 >= q.maxAttempts:
		q.metrics.errors.WithLabelValues(q.what).Inc()
		q.giveUp(pod, job, "gave_up", err)
	default:
		q.metrics.errors.WithLabelValues(q.what).Inc()
		q.log.Warn("writing "+q.shown+" failed, will retry", "pod", pod.Namespace+"/"+pod.Name,
			"attempt", q.queue.NumRequeues(pod)+1, "error", err)
		q.queue.AddRateLimited(pod)
	}
	return true
}

func (q *podQueue) giveUp(pod podKey, job podJob, why string, err error) {
	q.metrics.dropped.WithLabelValues(q.what, why).Inc()
	q.log.Error(q.shown+" not written", "pod", pod.Namespace+"/"+pod.Name, "why", why, "error", err)
	q.queue.Forget(pod)
	job.settle()
}
