package serve

import (
	"net/netip"
	"reflect"
	"testing"
	"time"

	"github.com/railcni/rail/daemon/attached"
	"github.com/railcni/rail/daemon/nri"
	"github.com/railcni/rail/daemon/readiness"
	"github.com/railcni/rail/daemon/service"
	"github.com/railcni/rail/ipam"
	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/rdma"
	"github.com/railcni/rail/pkg/topology"
)

func TestReadinessPods(t *testing.T) {
	_, m := discovered(t, "h100x8-cx7x4", nil)
	lease := func(sandbox, ifname, mode, addr string, nics ...string) ipam.Lease {
		return ipam.Lease{Sandbox: sandbox, IfName: ifname, Mode: mode, Address: netip.MustParsePrefix(addr), NICs: nics,
			PodNamespace: "ml", PodName: "pod-" + sandbox, PodUID: "uid-" + sandbox, Netns: "/var/run/netns/" + sandbox}
	}
	leases := []ipam.Lease{
		lease("s1", "rail0", "move", "10.0.0.1/24", "mlx5_0"),
		lease("s1", "net1", "ipam", "10.1.0.1/24"),
		lease("s1", "rail1", "move", "10.0.1.1/24", "mlx5_1"),
		lease("s2", "net1", "ipam", "10.1.0.2/24"),
		lease("s3", "rail0", "ipoib", "10.2.0.3/24", "mlx5_9:2"),
	}
	for _, mode := range []rdma.NetnsMode{rdma.NetnsShared, rdma.NetnsExclusive} {
		t.Run(string(mode), func(t *testing.T) {
			r := &railReadiness{placed: attached.NewPlacements(nil), leases: func() []ipam.Lease { return leases }, rdmaNetns: mode}
			r.containers = func(sandbox string) []nri.ContainerRecord {
				if sandbox != "s1" {
					return nil
				}
				return []nri.ContainerRecord{{Name: "side", GIDIndex: -1}, {Name: "app", Pid: 7, Start: 880007, Memlock: 1 << 30, GIDIndex: 3,
					Devices: []nri.DeviceRecord{{Path: "/dev/infiniband/uverbs0", Major: 231, Minor: 192}}}}
			}
			r.placed.Attached(service.Attached{Sandbox: "s1", Network: "rail", Interfaces: []service.AttachedInterface{{
				PlanInterface: api.PlanInterface{Name: "rail0", Distance: "PIX", Reason: "closest", NIC: &api.NIC{RDMADevice: "mlx5_0", LinkLayer: "InfiniBand"}},
				Distances:     []service.GPUDistance{{GPU: 0, Class: "PIX", Chose: true}, {GPU: 1, Class: "PIX", Chose: true}},
			}}})
			pods := r.pods(m)
			if len(pods) != 2 || pods[0].Sandbox != "s1" || pods[1].Sandbox != "s3" {
				t.Fatalf("pods %+v: want s1 and s3 (s2 holds no NIC)", pods)
			}
			s1 := pods[0]
			want0 := readiness.Rail{Netns: "/var/run/netns/s1", IfName: "rail0", Addresses: []netip.Prefix{netip.MustParsePrefix("10.0.0.1/24")},
				Device: "mlx5_0", Port: 1, LinkLayer: topology.InfiniBand, Mode: api.ModeMove, Exclusive: mode == rdma.NetnsExclusive, GIDIndex: 3,
				Placed: readiness.Placement{Network: "rail", NIC: &api.NIC{RDMADevice: "mlx5_0", LinkLayer: "InfiniBand"}, Distance: "PIX", Reason: "closest",
					Distances: []api.GPUDistance{{GPU: 0, Class: "PIX", Chose: true}, {GPU: 1, Class: "PIX", Chose: true}}}}
			if len(s1.Rails) != 2 || !reflect.DeepEqual(s1.Rails[0], want0) || s1.Rails[1].Device != "mlx5_1" || s1.Rails[1].Placed.Reason != "" {
				t.Fatalf("s1 rails %+v\nwant first %+v", s1.Rails, want0)
			}
			if len(s1.GPUs) != 2 || s1.GPUs[0].PCI != m.GPUs[0].PCI || s1.Name != "pod-s1" || s1.UID != "uid-s1" {
				t.Fatalf("s1 %+v", s1)
			}
			if len(s1.Containers) != 2 || s1.Containers[1].Pid != 7 || s1.Containers[1].Start != 880007 || s1.Containers[1].Devices[0].Major != 231 {
				t.Fatalf("s1 containers %+v", s1.Containers)
			}
			s3 := pods[1].Rails[0]
			if s3.Device != "mlx5_9" || s3.Port != 2 || s3.GIDIndex != -1 || s3.Exclusive {
				t.Fatalf("a NIC the machine does not know: %+v", s3)
			}
			r.placed.Released(service.Released{Sandbox: "s1", Interfaces: []service.ReleasedInterface{{Name: "rail0"}}})
			if p := r.pods(m)[0]; p.Rails[0].Placed.Reason != "" || len(p.GPUs) != 0 {
				t.Fatalf("placement kept after release: %+v", p)
			}
			// a sandbox whose leases went without a DEL (GC) is forgotten
			// after the grace; a leased one is kept
			now := time.Now()
			r.placed = attached.NewPlacements(func() time.Time { return now })
			for _, sandbox := range []string{"gone", "s1"} {
				r.placed.Attached(service.Attached{Sandbox: sandbox, Interfaces: []service.AttachedInterface{{
					PlanInterface: api.PlanInterface{Name: "rail1", Reason: "closest"}}}})
			}
			r.pods(m)
			if r.placed.Of("gone", "rail1").Reason == "" {
				t.Fatal("a fresh placement without a lease was forgotten")
			}
			now = now.Add(2 * attached.Grace)
			r.pods(m)
			if r.placed.Of("gone", "rail1").Reason != "" || r.placed.Of("s1", "rail1").Reason == "" {
				t.Fatal("past the grace: the unleased placement kept, or the leased one forgotten")
			}
		})
	}
}
