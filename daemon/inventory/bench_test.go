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

// BenchmarkUpdate is what a NIC's link event costs: one RDMA device of
// the largest built-in machine read again, found unchanged (nothing
// published), as when another plugin adds a macvlan on the NIC.
func BenchmarkUpdate(b *testing.B) {
	inv := largestMachine(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, published := inv.Update("bench", []string{"mlx5_3"}); published {
			b.Fatal("an unchanged device published a snapshot")
		}
	}
}

// BenchmarkIgnoredEvent is what a link event of a pod's veth costs once
// read: the lookup of its name and the sysfs lookup that finds no
// `device` below it.
func BenchmarkIgnoredEvent(b *testing.B) {
	inv := largestMachine(b)
	f := newEventFilter(inv.sys)
	ev := LinkEvent{Name: "veth0a1b2c3d", Index: 77}
	b.ReportAllocs()
	for b.Loop() {
		if c := f.classify(inv.Current(), ev); !c.none() {
			b.Fatal("a veth's event concerns the inventory")
		}
	}
}

// largestMachine is an inventory of the largest built-in machine.
func largestMachine(b *testing.B) *Inventory {
	b.Helper()
	root := b.TempDir()
	if _, err := fakesys.Write(root, "gpu8-nic8", fakesys.Options{}); err != nil {
		b.Fatal(err)
	}
	inv, err := New(root, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	return inv
}
