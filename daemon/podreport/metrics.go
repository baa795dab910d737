package podreport

import "github.com/prometheus/client_golang/prometheus"

// reportMetrics count what reporting dropped and what the API server
// refused; none of it ever reaches a CNI result.
type reportMetrics struct {
	dropped *prometheus.CounterVec // what: attached, refused, released, network_status, rdma_ready; why: queue_full, gave_up, unreadable
	errors  *prometheus.CounterVec // what: event, network_status, rdma_ready
}

func newReportMetrics(reg prometheus.Registerer) (*reportMetrics, error) {
	m := &reportMetrics{
		dropped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rail_pod_reports_dropped_total",
			Help: "Pod reports raild dropped: attached, refused, released (the report queue was full) and network_status (queue_full, gave_up after retries, unreadable annotation) and rdma_ready (queue_full, gave_up).",
		}, []string{"what", "why"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rail_pod_report_errors_total",
			Help: "Failed API requests recording pod Events, writing network-status or the rail.dev/RDMAReady condition, by what.",
		}, []string{"what"}),
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.dropped, m.errors} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}
