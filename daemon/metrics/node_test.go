package metrics

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestWatchNode(t *testing.T) {
	tests := []struct {
		name  string
		state NodeState
		want  string
	}{
		{"one NIC down, one in a pod", NodeState{Version: 7, NICs: []NICState{{Name: "mlx5_0", Active: true, InPod: true}, {Name: "mlx5_1"}}, LinkFilter: true}, `
# HELP rail_link_filter_active 1 when the kernel filter on raild's link-event socket is set; 0: raild reads every link event of the node (too many links for one, the socket refused it, or no link events).
# TYPE rail_link_filter_active gauge
rail_link_filter_active 1
# HELP rail_link_filter_failures_total Times the link-event socket refused raild's kernel filter.
# TYPE rail_link_filter_failures_total counter
rail_link_filter_failures_total 0
# HELP rail_inventory_version Version of raild's current snapshot of the node (raised by each rescan).
# TYPE rail_inventory_version gauge
rail_inventory_version 7
# HELP rail_nic_active 1 when the NIC's port is ACTIVE in raild's current snapshot (a softRoCE node's NIC without an RDMA device: its netdev is up).
# TYPE rail_nic_active gauge
rail_nic_active{nic="mlx5_0"} 1
rail_nic_active{nic="mlx5_1"} 0
# HELP rail_nic_in_pod 1 when the NIC's netdev or RDMA device sits in a pod.
# TYPE rail_nic_in_pod gauge
rail_nic_in_pod{nic="mlx5_0"} 1
rail_nic_in_pod{nic="mlx5_1"} 0
`},
		{"an SR-IOV PF with 2 of 4 VFs held, one with none enabled; the filter refused", NodeState{Version: 1, PFs: []PFState{
			{PCI: "0000:19:00.0", NIC: "mlx5_0", Total: 4, Enabled: 4, Used: 2, Leaked: 1}, {PCI: "0000:b9:00.0", NIC: "mlx5_7", Total: 4}}, LinkFilterFailures: 3}, `
# HELP rail_link_filter_active 1 when the kernel filter on raild's link-event socket is set; 0: raild reads every link event of the node (too many links for one, the socket refused it, or no link events).
# TYPE rail_link_filter_active gauge
rail_link_filter_active 0
# HELP rail_link_filter_failures_total Times the link-event socket refused raild's kernel filter.
# TYPE rail_link_filter_failures_total counter
rail_link_filter_failures_total 3
# HELP rail_inventory_version Version of raild's current snapshot of the node (raised by each rescan).
# TYPE rail_inventory_version gauge
rail_inventory_version 1
# HELP rail_pf_vfs VFs an SR-IOV PF has enabled (sriov_numvfs).
# TYPE rail_pf_vfs gauge
rail_pf_vfs{nic="mlx5_0",pf="0000:19:00.0"} 4
rail_pf_vfs{nic="mlx5_7",pf="0000:b9:00.0"} 0
# HELP rail_pf_vfs_max VFs an SR-IOV PF can have (sriov_totalvfs).
# TYPE rail_pf_vfs_max gauge
rail_pf_vfs_max{nic="mlx5_0",pf="0000:19:00.0"} 4
rail_pf_vfs_max{nic="mlx5_7",pf="0000:b9:00.0"} 4
# HELP rail_pf_vfs_used VFs of an SR-IOV PF that pods hold.
# TYPE rail_pf_vfs_used gauge
rail_pf_vfs_used{nic="mlx5_0",pf="0000:19:00.0"} 2
rail_pf_vfs_used{nic="mlx5_7",pf="0000:b9:00.0"} 0
# HELP rail_pf_vfs_leaked VFs of an SR-IOV PF that carry a pod's admin MAC no lease owns, or share an admin MAC.
# TYPE rail_pf_vfs_leaked gauge
rail_pf_vfs_leaked{nic="mlx5_0",pf="0000:19:00.0"} 1
rail_pf_vfs_leaked{nic="mlx5_7",pf="0000:b9:00.0"} 0
`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := New()
			m.WatchNode(func() NodeState { return tt.state })
			err := testutil.GatherAndCompare(m.Registry, strings.NewReader(tt.want), "rail_inventory_version", "rail_nic_active", "rail_nic_in_pod",
				"rail_pf_vfs", "rail_pf_vfs_max", "rail_pf_vfs_used", "rail_pf_vfs_leaked", "rail_link_filter_active", "rail_link_filter_failures_total")
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}
