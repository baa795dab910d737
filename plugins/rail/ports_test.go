package main

import (
	"testing"

	"github.com/containernetworking/cni/pkg/skel"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/attach"
	"github.com/railcni/rail/pkg/netconf"
	"github.com/railcni/rail/pkg/rdma"
)

// TestPortTargetSpec: port 2 of a dual-port HCA attaches on port 2's
// netdev, moves its RDMA device in exclusive mode, and its alias owner
// records the port, so a recovered lease names mlx4_0:2; port 1 records
// the device alone, as a single-port NIC always did.
func TestPortTargetSpec(t *testing.T) {
	conf, err := netconf.LoadRail([]byte(`{"name":"n","type":"rail","mode":"move"}`))
	if err != nil {
		t.Fatal(err)
	}
	args := &skel.CmdArgs{ContainerID: "sb", IfName: "eth0"}
	tests := []struct {
		nic    api.NIC
		parent string
		owner  attach.Owner
		about  string // how errors name the interface
	}{
		{api.NIC{RDMADevice: "mlx4_0", Netdev: "ibp26s0d1", Port: 2}, "ibp26s0d1",
			attach.Owner{Sandbox: "sb", CNIIfName: "eth0", Network: "n", Pool: "p", NIC: "mlx4_0", NICPort: "2"},
			"rail0 (mlx4_0:2, netdev ibp26s0d1)"},
		{api.NIC{RDMADevice: "mlx4_0", Netdev: "ibp26s0", Port: 1}, "ibp26s0",
			attach.Owner{Sandbox: "sb", CNIIfName: "eth0", Network: "n", Pool: "p", NIC: "mlx4_0"}, "rail0 (mlx4_0, netdev ibp26s0)"},
		{api.NIC{RDMADevice: "mlx5_0", Netdev: "ib0"}, "ib0",
			attach.Owner{Sandbox: "sb", CNIIfName: "eth0", Network: "n", Pool: "p", NIC: "mlx5_0"}, "rail0 (mlx5_0, netdev ib0)"},
	}
	for _, tc := range tests {
		t.Run(tc.nic.Netdev, func(t *testing.T) {
			iface := api.PlanInterface{Name: "rail0", Pool: "p", NIC: &tc.nic, Addresses: []api.Address{{CIDR: "10.1.0.7/24"}}}
			spec, _, err := specFor(conf, iface, api.ModeMove, rdma.NetnsExclusive)
			if err != nil {
				t.Fatal(err)
			}
			if spec.Parent != tc.parent || spec.RDMADevice != tc.nic.RDMADevice || spec.RDMANetns != rdma.NetnsExclusive {
				t.Errorf("spec parent %s rdma %s exclusive %v, want %s %s true", spec.Parent, spec.RDMADevice, spec.RDMANetns, tc.parent, tc.nic.RDMADevice)
			}
			if got := attach.FitOwner(spec, ownerOf(args, conf, iface)); got != tc.owner {
				t.Errorf("owner %+v, want %+v", got, tc.owner)
			}
			if got := describeNIC(iface); got != tc.about {
				t.Errorf("described as %q, want %q", got, tc.about)
			}
		})
	}
}
