package nodenics_test

import (
	"testing"

	"github.com/railcni/rail/pkg/topology"
)

// BenchmarkOfOneNIC is the ADD-time check of one chosen NIC: its netdev,
// then the netns's addresses and routes (the frontend-lag stand-ins).
func BenchmarkOfOneNIC(b *testing.B) {
	m, r := frontendLagB(b)
	nic, _ := m.NICByName("mlx5_2")
	nics := []topology.NIC{nic}
	b.ResetTimer()
	for b.Loop() {
		if _, err := r.Of(nics); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAll is a rescan's read of every NIC.
func BenchmarkAll(b *testing.B) {
	m, r := frontendLagB(b)
	for b.Loop() {
		if _, err := r.All(m); err != nil {
			b.Fatal(err)
		}
	}
}
