package service

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/railcni/rail/ipam"
	"github.com/railcni/rail/pkg/api"
)

// portsOf prints a plan's interfaces as name=device:port/netdev gpus.
func portsOf(plan *api.Plan) string {
	var out []string
	for _, i := range plan.Interfaces {
		if i.NIC != nil {
			out = append(out, fmt.Sprintf("%s=%s:%d/%s%v", i.Name, i.NIC.RDMADevice, i.NIC.Port, i.NIC.Netdev, i.GPUs))
		}
	}
	return strings.Join(out, ",")
}

// TestDualPortPlans: each port of a dual-port HCA is a NIC of its own: the
// plan names the RDMA device and the port with the port's netdev, the
// lease records the target ("mlx4_0:2"), two pods in move mode get the two
// ports, and a pool bound to the PCI function serves both ports.
func TestDualPortPlans(t *testing.T) {
	pools := []ipam.PoolConfig{
		{Name: "ib", Subnet: "10.1.0.0/24", NICs: []string{"0000:1a:00.0"}},
		{Name: "roce", Subnet: "10.2.0.0/24", NICs: []string{"mlx4_1", "mlx4_1:2"}},
		{Name: "other", Subnet: "10.3.0.0/24", NICs: []string{"mlx5_0"}},
	}
	macvlan := func(r *api.AllocateRequest) { r.Mode = api.ModeMacvlan }
	tests := []struct {
		name    string
		earlier []string // GPUs of pods allocated first, in move mode
		gpus    string
		mutate  func(*api.AllocateRequest)
		want    string
		leases  string // the NICs the leases record, with their pools, sorted
	}{
		{name: "two GPUs, two ports", gpus: "0,1",
			want:   "rail0=mlx4_0:1/ibp26s0[0],rail1=mlx4_0:2/ibp26s0d1[1]",
			leases: "mlx4_0:2@ib mlx4_0@ib"},
		{name: "port 1 taken: the pod gets port 2", earlier: []string{"0"}, gpus: "0",
			want: "rail0=mlx4_0:2/ibp26s0d1[0]", leases: "mlx4_0:2@ib"},
		{name: "both ports taken: the next HCA", earlier: []string{"0", "1"}, gpus: "0",
			want: "rail0=mlx4_1:1/ens2[0]", leases: "mlx4_1@roce"},
		{name: "port 2 by selector", gpus: "0", mutate: func(r *api.AllocateRequest) { r.Selector.NICs = []string{"mlx4_0:2"} },
			want: "rail0=mlx4_0:2/ibp26s0d1[0]", leases: "mlx4_0:2@ib"},
		{name: "RoCE ports in macvlan mode", gpus: "2,3", mutate: macvlan,
			want: "rail0=mlx4_1:1/ens2[2],rail1=mlx4_1:2/ens2d1[3]", leases: "mlx4_1:2@roce mlx4_1@roce"},
		{name: "single-port NIC keeps its name", gpus: "4",
			want: "rail0=mlx5_0:1/ibp155s0[4]", leases: "mlx5_0@other"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc, _ := newService(t, "dualport-2s", pools, nil)
			ctx := context.Background()
			for i, gpus := range tt.earlier {
				if _, err := svc.Allocate(ctx, allocReq(fmt.Sprintf("earlier%d", i), gpus)); err != nil {
					t.Fatal(err)
				}
			}
			req := allocReq("pod", tt.gpus)
			if tt.mutate != nil {
				tt.mutate(&req)
			}
			plan, err := svc.Allocate(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			if got := portsOf(plan); got != tt.want {
				t.Errorf("plan %s, want %s", got, tt.want)
			}
			var leases []string
			for _, l := range svc.SandboxLeases("pod") {
				leases = append(leases, strings.Join(l.NICs, "+")+"@"+l.Pool)
			}
			slices.Sort(leases)
			if got := strings.Join(leases, " "); got != tt.leases {
				t.Errorf("leases %s, want %s", got, tt.leases)
			}
		})
	}
}
