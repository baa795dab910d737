package metrics

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/railcni/rail/pkg/api"
)

func TestWatchNode(t *testing.T) {
	tests := []struct {
		name  string
		state NodeState
		want  string
	}{
		{"one NIC down, one in a pod", NodeState{Version: 7, NICs: []NICState{{Name: "mlx5_0", Active: true, InPod: true}, {Name: "mlx5_1"}}}, `
# HELP rail_inventory_version Version of raild's current snapshot of the node (raised by each rescan).
# TYPE rail_inventory_version gauge
rail_inventory_version 7
# HELP rail_nic_active 1 when the NIC's port is ACTIVE in raild's current snapshot.
# TYPE rail_nic_active gauge
rail_nic_active{nic="mlx5_0"} 1
rail_nic_active{nic="mlx5_1"} 0
# HELP rail_nic_in_pod 1 when the NIC's netdev or RDMA device sits in a pod.
# TYPE rail_nic_in_pod gauge
rail_nic_in_pod{nic="mlx5_0"} 1
rail_nic_in_pod{nic="mlx5_1"} 0
`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := New(func() []api.PoolStatus { return nil })
			m.WatchNode(func() NodeState { return tt.state })
			err := testutil.GatherAndCompare(m.Registry, strings.NewReader(tt.want), "rail_inventory_version", "rail_nic_active", "rail_nic_in_pod")
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}
