package doctor

import (
	"strings"
	"testing"

	"github.com/railcni/rail/pkg/topology"
)

func TestCompareLive(t *testing.T) {
	nic := func(name, netdev string) topology.NIC { return topology.NIC{Name: name, Netdev: netdev} }
	bare := &topology.Machine{NICs: []topology.NIC{nic("mlx5_0", ""), nic("mlx5_1", "ib1")}}
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

// TestDeviceCountWithNICsInPods: a node whose every RDMA device sits in a
// pod (exclusive mode hides them from the host) is not told to load a
// driver when raild knows them; without raild, or with NICs nobody holds,
// it is.
func TestDeviceCountWithNICsInPods(t *testing.T) {
	nic := func(name string) topology.NIC { return topology.NIC{Name: name, Netdev: "n" + name} }
	tests := []struct {
		name      string
		bare      []topology.NIC
		live      *topology.Report
		wantLevel string
		wantWhat  string
	}{
		{"no raild, no device", nil, nil, "fail", "0 RDMA device(s) in /sys/class/infiniband"},
		{"every device in a pod", nil,
			&topology.Report{NICs: []topology.NIC{nic("rxe0")}, Holders: map[string]string{"rxe0": "ns/a"}},
			"ok", "0 RDMA device(s) in /sys/class/infiniband, 1 more in pods (raild)"},
		{"known but held by nobody", nil, &topology.Report{NICs: []topology.NIC{nic("rxe0")}},
			"fail", "0 RDMA device(s) in /sys/class/infiniband"},
		{"held and still on the host", []topology.NIC{nic("mlx5_0")},
			&topology.Report{NICs: []topology.NIC{nic("mlx5_0"), nic("mlx5_1")}, Holders: map[string]string{"mlx5_0": "ns/a", "mlx5_1": "ns/b"}},
			"ok", "1 RDMA device(s) in /sys/class/infiniband, 1 more in pods (raild)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bare := &topology.Machine{NICs: tt.bare}
			for _, c := range topologyChecks(bare, t.TempDir(), awayInPods(tt.live, bare)) {
				if strings.Contains(c.what, "RDMA device(s)") {
					if c.level != tt.wantLevel || c.what != tt.wantWhat {
						t.Fatalf("got %s %q, want %s %q", c.level, c.what, tt.wantLevel, tt.wantWhat)
					}
					return
				}
			}
			t.Fatal("no device count check")
		})
	}
}
