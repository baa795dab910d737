package metrics

import "github.com/prometheus/client_golang/prometheus"

// NICState is one NIC as the node's current snapshot shows it.
type NICState struct {
	Name   string
	Active bool // port ACTIVE
	InPod  bool // its netdev or RDMA device sits in a pod now
}

// NodeState is what the node's current snapshot says, at scrape time.
type NodeState struct {
	Version uint64
	NICs    []NICState
}

// NodeSource gives the current snapshot's state.
type NodeSource func() NodeState

var (
	nodeVersionDesc = prometheus.NewDesc("rail_inventory_version", "Version of raild's current snapshot of the node (raised by each rescan).", nil, nil)
	nicActiveDesc   = prometheus.NewDesc("rail_nic_active", "1 when the NIC's port is ACTIVE in raild's current snapshot.", []string{"nic"}, nil)
	nicInPodDesc    = prometheus.NewDesc("rail_nic_in_pod", "1 when the NIC's netdev or RDMA device sits in a pod.", []string{"nic"}, nil)
)

type nodeCollector struct{ source NodeSource }

// WatchNode exports the node's current snapshot (call once, at start).
func (m *Metrics) WatchNode(source NodeSource) {
	m.Registry.MustRegister(&nodeCollector{source: source})
}

func (c *nodeCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- nodeVersionDesc
	ch <- nicActiveDesc
	ch <- nicInPodDesc
}

func (c *nodeCollector) Collect(ch chan<- prometheus.Metric) {
	state := c.source()
	ch <- prometheus.MustNewConstMetric(nodeVersionDesc, prometheus.GaugeValue, float64(state.Version))
	for _, n := range state.NICs {
		ch <- prometheus.MustNewConstMetric(nicActiveDesc, prometheus.GaugeValue, oneIf(n.Active), n.Name)
		ch <- prometheus.MustNewConstMetric(nicInPodDesc, prometheus.GaugeValue, oneIf(n.InPod), n.Name)
	}
}

func oneIf(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
