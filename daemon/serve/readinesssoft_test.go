package serve

import (
	"net/netip"
	"testing"

	"github.com/railcni/rail/daemon/attached"
	"github.com/railcni/rail/ipam"
	"github.com/railcni/rail/pkg/rdma"
	"github.com/railcni/rail/pkg/topology"
)

// TestReadinessSoftRoCE: on a softRoCE node the checks look at each
// rail's own rxe in the pod (port 1, RoCE), not at the NIC the interface
// came from; on another node at the NIC.
func TestReadinessSoftRoCE(t *testing.T) {
	_, m := discovered(t, "h100x8-cx7x4", nil)
	leases := []ipam.Lease{
		{Sandbox: "s1", IfName: "rail0", Mode: "ipvlan", Address: netip.MustParsePrefix("10.0.0.1/24"), NICs: []string{"mlx5_0"}, Netns: "/var/run/netns/s1"},
		{Sandbox: "s1", IfName: "rail1", Mode: "move", Address: netip.MustParsePrefix("10.0.1.1/24"), NICs: []string{"mlx5_1"}, Netns: "/var/run/netns/s1"},
	}
	for _, soft := range []bool{true, false} {
		r := &railReadiness{placed: attached.NewPlacements(nil), leases: func() []ipam.Lease { return leases }, rdmaNetns: rdma.NetnsExclusive, softRoCE: soft}
		pods := r.pods(m)
		if len(pods) != 1 || len(pods[0].Rails) != 2 {
			t.Fatalf("softRoCE %v: pods %+v", soft, pods)
		}
		for i, rail := range pods[0].Rails {
			want, wantLL, wantExcl := leases[i].NICs[0], topology.InfiniBand, i == 1
			if soft {
				want, wantLL, wantExcl = rdma.SoftRoCEName("s1", leases[i].IfName), topology.Ethernet, false
			}
			if rail.Device != want || rail.Port != 1 || rail.LinkLayer != wantLL || rail.Exclusive != wantExcl {
				t.Errorf("softRoCE %v: rail %s checks %s port %d %s exclusive %v; want %s port 1 %s exclusive %v",
					soft, rail.IfName, rail.Device, rail.Port, rail.LinkLayer, rail.Exclusive, want, wantLL, wantExcl)
			}
		}
	}
}
