package netns

import (
	"context"
	"testing"
	"time"

	"github.com/railcni/rail/integration/harness"
	"github.com/railcni/rail/pkg/api"
)

// benchPair is rail in one mode and the upstream plugin doing the same
// work (move a netdev / make a macvlan child, and give it an address).
type benchPair struct {
	name     string
	rail     map[string]any
	upstream func(node *harness.Node, parent string) map[string]any
}

var benchPairs = []benchPair{
	{name: "move-vs-host-device", rail: map[string]any{"mode": api.ModeMove},
		upstream: func(node *harness.Node, parent string) map[string]any {
			return map[string]any{"type": "host-device", "device": parent, "ipam": node.HostLocal("10.78.0.0/24")}
		}},
	{name: "macvlan-vs-macvlan", rail: map[string]any{"mode": api.ModeMacvlan},
		upstream: func(node *harness.Node, parent string) map[string]any {
			return map[string]any{"type": "macvlan", "master": parent, "mode": "bridge",
				"ipam": node.HostLocal("10.79.0.0/24")}
		}},
}

// BenchmarkAddDel times one ADD+DEL through libcni of rail (alone, as
// Multus calls it: CNI_IFNAME net1) and of the upstream plugin doing the
// same job on the same stand-in NIC, interleaved in one run so both see
// the same machine load. It reports each plugin's ms per ADD+DEL and their
// ratio; ns/op covers one of each.
func BenchmarkAddDel(b *testing.B) {
	for _, pair := range benchPairs {
		b.Run(pair.name, func(b *testing.B) {
			node := newNode(b, harness.NodeOptions{Machine: "lab-1x1"})
			parent := node.Machine.Netdevs["mlx5_0"]
			railNet, err := node.Network("railbench", "1.1.0", node.RailPlugin(pair.rail))
			if err != nil {
				b.Fatal(err)
			}
			upNet, err := node.Network("upstreambench", "1.1.0", pair.upstream(node, parent))
			if err != nil {
				b.Fatal(err)
			}
			pod := newPod(b, node, "bench", map[string]string{api.AnnotationGPUs: "0"})
			pod.IfName = "net1"
			var railTime, upTime time.Duration
			n := 0
			for b.Loop() {
				railTime += addDel(b, railNet, pod)
				upTime += addDel(b, upNet, pod)
				n++
			}
			b.ReportMetric(float64(railTime.Microseconds())/1000/float64(n), "rail-ms/op")
			b.ReportMetric(float64(upTime.Microseconds())/1000/float64(n), "upstream-ms/op")
			b.ReportMetric(float64(railTime)/float64(upTime), "rail/upstream")
		})
	}
}

func addDel(b *testing.B, network *harness.Network, pod *harness.Pod) time.Duration {
	b.Helper()
	ctx := context.Background()
	start := time.Now()
	if _, err := network.Add(ctx, pod); err != nil {
		b.Fatalf("ADD %s: %v", network.List.Name, err)
	}
	if err := network.Del(ctx, pod); err != nil {
		b.Fatalf("DEL %s: %v", network.List.Name, err)
	}
	return time.Since(start)
}
