package readiness

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// ConditionType is the pod condition raild writes.
const ConditionType = "rail.dev/RDMAReady"

// Condition is a pod's rail.dev/RDMAReady as the tracker judged it.
type Condition struct {
	Namespace string
	Name      string
	UID       string
	Ready     bool
	Reason    string
	Message   string
	// Down: the pod was RDMA-ready and is not anymore (a Warning Event).
	Down bool
}

// Sink writes conditions to the cluster; it must not block (podreport
// queues, coalesces and retries).
type Sink interface {
	RDMAReady(Condition)
}

// Options configure a Tracker; zero values take the defaults.
type Options struct {
	Checker *Checker
	// Pods lists every pod that holds rail interfaces now.
	Pods func() []Pod
	// Sink gets each pod's condition when it changes (nil: kept in memory
	// only, for doctor).
	Sink Sink
	// Interval is how often every pod is checked again beside the wake-ups
	// (default 5s): a port down, a GID gone or a NIC leaving the pod shows
	// within it even when no event tells.
	Interval   time.Duration
	Registerer prometheus.Registerer
	Log        *slog.Logger
}

// Tracker checks the pods with rail interfaces, on a wake-up (a sandbox's
// network set up, a container started, the node's inventory changed) and
// on a timer, and hands each pod's condition to the sink when it changes.
type Tracker struct {
	opt     Options
	wake    chan struct{}
	metrics *trackerMetrics

	mu    sync.Mutex
	state map[string]*podState // by sandbox
}

// podState is the last judgement of one pod.
type podState struct {
	cond   Condition
	result Result
}

// NewTracker builds a tracker; Run runs it.
func NewTracker(opt Options) (*Tracker, error) {
	if opt.Interval <= 0 {
		opt.Interval = 5 * time.Second
	}
	if opt.Log == nil {
		opt.Log = slog.New(slog.DiscardHandler)
	}
	m, err := newTrackerMetrics(opt.Registerer, opt.Checker)
	if err != nil {
		return nil, err
	}
	return &Tracker{opt: opt, wake: make(chan struct{}, 1), metrics: m, state: map[string]*podState{}}, nil
}

// Wake asks for a check of every pod soon; it never blocks.
func (t *Tracker) Wake() {
	select {
	case t.wake <- struct{}{}:
	default:
	}
}

// SandboxChanged is Wake for one sandbox (the NRI plugin's listener).
func (t *Tracker) SandboxChanged(string) { t.Wake() }

// Run checks the pods until ctx ends.
func (t *Tracker) Run(ctx context.Context) {
	tick := time.NewTicker(t.opt.Interval)
	defer tick.Stop()
	for {
		t.CheckAll()
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-t.wake:
		}
	}
}

// CheckAll checks every pod once and reports what changed.
func (t *Tracker) CheckAll() {
	pods := t.opt.Pods()
	seen := make(map[string]bool, len(pods))
	var changed []Condition
	for _, p := range pods {
		seen[p.Sandbox] = true
		res := t.opt.Checker.Run(p)
		if c, ok := t.judge(p, res); ok {
			changed = append(changed, c)
		}
	}
	t.forgetGone(seen)
	for _, c := range changed {
		if t.opt.Sink != nil && c.Name != "" {
			t.opt.Sink.RDMAReady(c)
		}
	}
}

// judge records a pod's result and returns its condition when it differs
// from the last one.
func (t *Tracker) judge(p Pod, res Result) (Condition, bool) {
	reason, msg := res.Summary(p.Key())
	c := Condition{Namespace: p.Namespace, Name: p.Name, UID: p.UID, Ready: res.Ready(), Reason: reason, Message: msg}
	t.mu.Lock()
	defer t.mu.Unlock()
	prev, known := t.state[p.Sandbox]
	t.state[p.Sandbox] = &podState{cond: c, result: res}
	if known && prev.cond.Ready == c.Ready && prev.cond.Reason == c.Reason && prev.cond.Message == c.Message {
		return c, false
	}
	if known && prev.cond.Ready != c.Ready {
		t.metrics.transitions.WithLabelValues(stateLabel(c.Ready)).Inc()
	}
	c.Down = known && prev.cond.Ready && !c.Ready
	lg := t.opt.Log.With("pod", p.Key(), "sandbox", p.Sandbox, "ready", c.Ready, "reason", c.Reason)
	switch {
	case c.Down:
		lg.Warn("a pod's RDMA path broke", "message", c.Message)
	case !c.Ready:
		lg.Info("a pod's RDMA path is not ready", "message", c.Message)
	default:
		lg.Info("a pod's RDMA path is ready")
	}
	return c, true
}

func (t *Tracker) forgetGone(seen map[string]bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	ready := 0
	for sandbox, s := range t.state {
		if !seen[sandbox] {
			delete(t.state, sandbox)
			continue
		}
		if s.cond.Ready {
			ready++
		}
	}
	t.metrics.pods.WithLabelValues("true").Set(float64(ready))
	t.metrics.pods.WithLabelValues("false").Set(float64(len(t.state) - ready))
}

func stateLabel(ready bool) string {
	if ready {
		return "true"
	}
	return "false"
}

// trackerMetrics: how many pods are RDMA-ready, and how often that flips.
type trackerMetrics struct {
	pods        *prometheus.GaugeVec
	transitions *prometheus.CounterVec
}

func newTrackerMetrics(reg prometheus.Registerer, c *Checker) (*trackerMetrics, error) {
	m := &trackerMetrics{
		pods: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "rail_rdma_ready_pods",
			Help: "Pods holding rail interfaces on this node by their rail.dev/RDMAReady condition (state true or false).",
		}, []string{"state"}),
		transitions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rail_rdma_ready_transitions_total",
			Help: "Times a pod's rail.dev/RDMAReady condition flipped, by the state it flipped to.",
		}, []string{"to"}),
	}
	if reg == nil {
		return m, nil
	}
	collectors := []prometheus.Collector{m.pods, m.transitions}
	if c != nil {
		collectors = append(collectors, prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "rail_readiness_abandoned_reads",
			Help: "Container reads of the readiness checks given up on (a hung mount under a container's root) and still blocked.",
		}, func() float64 { return float64(c.AbandonedReads()) }))
	}
	for _, c := range collectors {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}
