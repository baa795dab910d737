package topology_test

import (
	"testing"

	"github.com/railcni/rail/pkg/topology"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

// largest is the biggest built-in machine: 8 GPUs, 11 RDMA devices.
const largest = "gpu8-nic8"

func BenchmarkDiscover(b *testing.B) {
	root, _ := writeMachine(b, largest, fakesys.Options{})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := topology.Discover(root); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSelect(b *testing.B) {
	root, _ := writeMachine(b, largest, fakesys.Options{})
	m := discover(b, root)
	req := topology.Request{
		GPUs:      []int{0, 1, 2, 3, 4, 5, 6, 7},
		LinkLayer: "InfiniBand",
		Exclude:   map[string]string{"mlx5_3": "owned by pod ns/x"},
		Load:      map[string]int{"mlx5_0": 1, "mlx5_5": 2},
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.Select(req); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSelectOneGPU(b *testing.B) {
	root, _ := writeMachine(b, largest, fakesys.Options{})
	m := discover(b, root)
	req := topology.Request{GPUs: []int{5}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.Select(req); err != nil {
			b.Fatal(err)
		}
	}
}
