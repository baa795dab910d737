package metrics

import "github.com/prometheus/client_golang/prometheus"

// NICState is one NIC as the node's current snapshot shows it.
type NICState struct {
	Name   string
	Active bool // port ACTIVE
	InPod  bool // its netdev or RDMA device sits in a pod now
}

// PFState is one SR-IOV PF as the node's current snapshot shows it.
type PFState struct {
	PCI     string
	NIC     string // the NIC standing for it in placement, "" none
	Total   int    // sriov_totalvfs
	Enabled int    // sriov_numvfs
	Used    int    // VFs a lease holds
	Leaked  int    // VFs carrying a pod's admin MAC no lease owns (raild's last sweep)
}

// NodeState is what the node's current snapshot says, at scrape time.
type NodeState struct {
	Version uint64
	NICs    []NICState
	PFs     []PFState
	// LinkFilter: the kernel filter on raild's link-event socket is set;
	// false: raild reads every link event of the node.
	LinkFilter bool
	// LinkFilterFailures are the times the socket refused the filter.
	LinkFilterFailures uint64
}

// NodeSource gives the current snapshot's state.
type NodeSource func() NodeState

var (
	nodeVersionDesc = prometheus.NewDesc("rail_inventory_version", "Version of raild's current snapshot of the node (raised by each rescan).", nil, nil)
	nicActiveDesc   = prometheus.NewDesc("rail_nic_active", "1 when the NIC's port is ACTIVE in raild's current snapshot (a softRoCE node's NIC without an RDMA device: its netdev is up).", []string{"nic"}, nil)
	nicInPodDesc    = prometheus.NewDesc("rail_nic_in_pod", "1 when the NIC's netdev or RDMA device sits in a pod.", []string{"nic"}, nil)
	pfVFsDesc       = prometheus.NewDesc("rail_pf_vfs", "VFs an SR-IOV PF has enabled (sriov_numvfs).", []string{"pf", "nic"}, nil)
	pfVFsMaxDesc    = prometheus.NewDesc("rail_pf_vfs_max", "VFs an SR-IOV PF can have (sriov_totalvfs).", []string{"pf", "nic"}, nil)
	pfVFsUsedDesc   = prometheus.NewDesc("rail_pf_vfs_used", "VFs of an SR-IOV PF that pods hold.", []string{"pf", "nic"}, nil)
	linkFilterDesc  = prometheus.NewDesc("rail_link_filter_active", "1 when the kernel filter on raild's link-event socket is set; 0: raild reads every link event of the node (too many links for one, the socket refused it, or no link events).", nil, nil)
	linkFilterFails = prometheus.NewDesc("rail_link_filter_failures_total", "Times the link-event socket refused raild's kernel filter.", nil, nil)
	pfVFsLeakedDesc = prometheus.NewDesc("rail_pf_vfs_leaked", "VFs of an SR-IOV PF that carry a pod's admin MAC no lease owns, or share an admin MAC.", []string{"pf", "nic"}, nil)
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
	ch <- pfVFsDesc
	ch <- pfVFsMaxDesc
	ch <- pfVFsUsedDesc
	ch <- pfVFsLeakedDesc
	ch <- linkFilterDesc
	ch <- linkFilterFails
}

func (c *nodeCollector) Collect(ch chan<- prometheus.Metric) {
	state := c.source()
	ch <- prometheus.MustNewConstMetric(nodeVersionDesc, prometheus.GaugeValue, float64(state.Version))
	ch <- prometheus.MustNewConstMetric(linkFilterDesc, prometheus.GaugeValue, oneIf(state.LinkFilter))
	ch <- prometheus.MustNewConstMetric(linkFilterFails, prometheus.CounterValue, float64(state.LinkFilterFailures))
	for _, n := range state.NICs {
		ch <- prometheus.MustNewConstMetric(nicActiveDesc, prometheus.GaugeValue, oneIf(n.Active), n.Name)
		ch <- prometheus.MustNewConstMetric(nicInPodDesc, prometheus.GaugeValue, oneIf(n.InPod), n.Name)
	}
	for _, pf := range state.PFs {
		ch <- prometheus.MustNewConstMetric(pfVFsDesc, prometheus.GaugeValue, float64(pf.Enabled), pf.PCI, pf.NIC)
		ch <- prometheus.MustNewConstMetric(pfVFsMaxDesc, prometheus.GaugeValue, float64(pf.Total), pf.PCI, pf.NIC)
		ch <- prometheus.MustNewConstMetric(pfVFsUsedDesc, prometheus.GaugeValue, float64(pf.Used), pf.PCI, pf.NIC)
		ch <- prometheus.MustNewConstMetric(pfVFsLeakedDesc, prometheus.GaugeValue, float64(pf.Leaked), pf.PCI, pf.NIC)
	}
}

func oneIf(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
