package nodenics_test

import (
	"fmt"

	"testing"

	"github.com/railcni/rail/daemon/nodenics/nodenicstest"
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

// BenchmarkOfOneNICBusyNode is the ADD-time check of one chosen NIC on a
// node whose netns also holds 200 pods' host veths, each with an address
// and a route as ptp gives them (and IPv6's link-local ones): what a
// whole-netns dump of addresses and routes reads and throws away.
func BenchmarkOfOneNICBusyNode(b *testing.B) {
	standIns := []nodenicstest.StandIn{
		{Name: "fe0", Addrs: []string{"10.99.0.2/24"}, Routes: []nodenicstest.Route{{Dst: "default", Gw: "10.99.0.1"}}},
		{Name: "rail0"},
		{Name: "rail1", Routes: []nodenicstest.Route{{Dst: "10.50.0.0/16"}}},
	}
	for i := range 200 {
		standIns = append(standIns, nodenicstest.StandIn{Name: fmt.Sprintf("veth%d", i),
			Addrs:  []string{fmt.Sprintf("10.98.%d.%d/32", i/250, i%250+1)},
			Routes: []nodenicstest.Route{{Dst: fmt.Sprintf("10.97.%d.%d/32", i/250, i%250+1)}}})
	}
	m, r := frontendLagWith(b, standIns...)
	nic, _ := m.NICByName("mlx5_0")
	nics := []topology.NIC{nic}
	b.ResetTimer()
	for b.Loop() {
		if _, err := r.Of(nics); err != nil {
			b.Fatal(err)
		}
	}
}
