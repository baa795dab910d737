package inventory

import (
	"testing"

	"github.com/railcni/rail/pkg/topology/fakesys"
)

// BenchmarkRescan is one rescan of the largest built-in machine (8 GPUs,
// 11 RDMA devices) with two NICs held by pods, one of them gone from the
// host: discovery, the merge with the leases, and publication.
func BenchmarkRescan(b *testing.B) {
	root := b.TempDir()
	spec, err := fakesys.Write(root, "gpu8-nic8", fakesys.Options{})
	if err != nil {
		b.Fatal(err)
	}
	holders := map[string]string{"mlx5_0": "ns/a", "mlx5_1": "ns/b"}
	inv, err := New(root, nil, func() map[string]string { return holders })
	if err != nil {
		b.Fatal(err)
	}
	nic, _ := spec.NIC("mlx5_1")
	if err := fakesys.RemoveNetdev(root, nic.Netdev); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := inv.Rescan("bench"); err != nil {
			b.Fatal(err)
		}
	}
}
