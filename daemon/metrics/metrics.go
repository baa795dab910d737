// Package metrics holds raild's Prometheus metrics on a registry of its own.
package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/railcni/rail/pkg/api"
)

// Metrics are the instruments raild updates.
type Metrics struct {
	Registry    *prometheus.Registry
	Allocations *prometheus.CounterVec   // pool, mode
	Releases    *prometheus.CounterVec   // pool
	Errors      *prometheus.CounterVec   // op, reason
	Placements  *prometheus.CounterVec   // nic, class
	Latency     *prometheus.HistogramVec // endpoint
	// VFResets are the VFs raild's sweep reset, by PF netdev and reason:
	// returned (back from a pod that is gone, from rail's label) or
	// unowned (an admin MAC no lease holds, on a PF of sriov.ownPFs).
	VFResets *prometheus.CounterVec
	// NRIHooks are the NRI hooks the runtime calls (CreateContainer,
	// RunPodSandbox, ...): rail_nri_hooks_total and
	// rail_nri_hooks_duration_seconds.
	NRIHooks *Calls
	// DevicePlugin are the kubelet's calls into the device plugin
	// (Allocate, GetPreferredAllocation, ListAndWatch sends, ...):
	// rail_deviceplugin_calls_total and
	// rail_deviceplugin_calls_duration_seconds.
	DevicePlugin *Calls
}

// PoolSource gives the pools' size and use at scrape time.
type PoolSource func() []api.PoolStatus

// New registers every metric on a fresh registry; the pools' and the
// node's are registered by WatchPools and WatchNode once their sources
// exist.
func New() *Metrics {
	m := &Metrics{
		Registry: prometheus.NewRegistry(),
		Allocations: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rail_allocations_total", Help: "Pod interfaces given an address, by pool and mode.",
		}, []string{"pool", "mode"}),
		Releases: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rail_releases_total", Help: "Leases released, by pool.",
		}, []string{"pool"}),
		Errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rail_errors_total", Help: "Failed requests, by operation and reason.",
		}, []string{"op", "reason"}),
		Placements: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rail_placements_total", Help: "NICs handed to pods, by NIC and GPU distance class (none: the pod named no GPUs).",
		}, []string{"nic", "class"}),
		Latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "rail_request_duration_seconds", Help: "Socket API latency, by endpoint.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
		}, []string{"endpoint"}),
		VFResets: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rail_vf_resets_total", Help: "VFs raild's sweep reset, by PF and reason (returned: back from a pod that is gone; unowned: an admin MAC no lease holds, on a PF raild owns).",
		}, []string{"pf", "reason"}),
		NRIHooks: newCalls("rail_nri_hooks", "NRI hooks the runtime called",
			"Time raild took to answer an NRI hook"),
		DevicePlugin: newCalls("rail_deviceplugin_calls", "Device plugin calls from the kubelet (a ListAndWatch stream counts each list it sends)",
			"Time raild took to answer a device plugin call"),
	}
	m.Registry.MustRegister(append(m.NRIHooks.collectors(), m.DevicePlugin.collectors()...)...)
	m.Registry.MustRegister(m.Allocations, m.Releases, m.Errors, m.Placements, m.Latency, m.VFResets,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// WatchPools exports the pools' size and use (call once, at start).
func (m *Metrics) WatchPools(source PoolSource) {
	m.Registry.MustRegister(&poolCollector{source: source})
}

var (
	poolSizeDesc = prometheus.NewDesc("rail_pool_size", "Addresses this node may hand out from the pool.", []string{"pool"}, nil)
	poolUsedDesc = prometheus.NewDesc("rail_pool_used", "Addresses leased from the pool.", []string{"pool"}, nil)
	poolCoolDesc = prometheus.NewDesc("rail_pool_cooling", "Released addresses waiting out the cooldown.", []string{"pool"}, nil)
)

type poolCollector struct{ source PoolSource }

func (c *poolCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- poolSizeDesc
	ch <- poolUsedDesc
	ch <- poolCoolDesc
}

func (c *poolCollector) Collect(ch chan<- prometheus.Metric) {
	for _, p := range c.source() {
		ch <- prometheus.MustNewConstMetric(poolSizeDesc, prometheus.GaugeValue, float64(p.Size), p.Name)
		ch <- prometheus.MustNewConstMetric(poolUsedDesc, prometheus.GaugeValue, float64(p.Used), p.Name)
		ch <- prometheus.MustNewConstMetric(poolCoolDesc, prometheus.GaugeValue, float64(p.Cooling), p.Name)
	}
}
