package main

import (
	"strings"
	"testing"

	"github.com/railcni/rail/pkg/topology"
)

func TestCompareLive(t *testing.T) {
	nic := func(name, netdev string) topology.NIC { return topology.NIC{Name: name, Netdev: netdev} }
	bare := topology.NewMachine(nil, []topology.NIC{nic("mlx5_0", ""), nic("mlx5_1", "ib1")})
	live := topology.Report{
		NICs:    []topology.NIC{nic("mlx5_0", "ib0"), nic("mlx5_1", "ib1"), nic("mlx5_2", "ib2"), nic("mlx5_3", "ib3")},
		Holders: map[string]string{"mlx5_0": "ns/a", "mlx5_2": "ns/b"},
	}
	got := compareLive(live, bare)
	want := []string{
		"ok mlx5_0 (ib0) held by ns/a",
		"ok mlx5_2 (ib2) sits in pod ns/b: gone from the host, known to raild",
		"warn mlx5_3 (ib3) is in raild's snapshot but not on the host, and no pod holds it",
	}
	var lines []string
	for _, c := range got {
		lines = append(lines, c.level+" "+c.what)
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Fatalf("checks:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
}
