package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Call results, the result label of a Calls counter.
const (
	ResultOK    = "ok"
	ResultError = "error"
)

// hookBuckets span a hook answered from memory (tens of microseconds) up
// to containerd's 2 s budget for an NRI request.
var hookBuckets = []float64{.00005, .0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2}

// Calls counts and times the calls of one kind the runtime or the kubelet
// makes into raild (NRI hooks, device plugin calls), by call name.
type Calls struct {
	Total    *prometheus.CounterVec   // call, result
	Duration *prometheus.HistogramVec // call
}

func newCalls(prefix, counted, timed string) *Calls {
	return &Calls{
		Total: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: prefix + "_total", Help: counted + ", by call and result (ok, error).",
		}, []string{"call", "result"}),
		Duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: prefix + "_duration_seconds", Help: timed + ", by call.",
			Buckets: hookBuckets,
		}, []string{"call"}),
	}
}

// Observe counts one call that began at start and failed with err (nil:
// ok). A nil Calls observes nothing, so tests and tools may leave metrics
// out.
func (c *Calls) Observe(call string, start time.Time, err error) {
	c.Call(call).Observe(start, err)
}

// Call is the instruments of one call name, looked up once so a hot path
// only counts and observes.
type Call struct {
	ok, failed prometheus.Counter
	took       prometheus.Observer
}

// Call looks up the instruments of one call name (nil for a nil Calls).
func (c *Calls) Call(name string) *Call {
	if c == nil {
		return nil
	}
	return &Call{ok: c.Total.WithLabelValues(name, ResultOK), failed: c.Total.WithLabelValues(name, ResultError),
		took: c.Duration.WithLabelValues(name)}
}

// Observe counts one call that began at start and failed with err (nil:
// ok); a nil Call observes nothing.
func (c *Call) Observe(start time.Time, err error) {
	if c == nil {
		return
	}
	if err != nil {
		c.failed.Inc()
	} else {
		c.ok.Inc()
	}
	c.took.Observe(time.Since(start).Seconds())
}

func (c *Calls) collectors() []prometheus.Collector {
	return []prometheus.Collector{c.Total, c.Duration}
}

// Tally is what a scrape shows of one call name: how many ended ok, how
// many with an error, and how many were timed.
type Tally struct{ OK, Failed, Timed uint64 }

// Tally reads the counts of one call name (zero for a nil Calls).
func (c *Calls) Tally(call string) Tally {
	var t Tally
	if c == nil {
		return t
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(c.collectors()...)
	families, err := reg.Gather()
	if err != nil {
		return t
	}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["call"] != call {
				continue
			}
			switch {
			case m.GetHistogram() != nil:
				t.Timed += m.GetHistogram().GetSampleCount()
			case labels["result"] == ResultOK:
				t.OK += uint64(m.GetCounter().GetValue())
			case labels["result"] == ResultError:
				t.Failed += uint64(m.GetCounter().GetValue())
			}
		}
	}
	return t
}
