package placement

import (
	"fmt"
	"strings"
	"testing"

	"github.com/railcni/rail/pkg/topology"
)

// TestOneDevicePerPod: picks of ports of one RDMA device fold into the
// first (its GPUs added, the closer class kept); netdev-only NICs have no
// RDMA device and never fold into each other.
func TestOneDevicePerPod(t *testing.T) {
	port := func(name, device string, gpu int, class topology.Class) Pick {
		return Pick{NIC: topology.NIC{Name: name, Device: device}, GPUs: []int{gpu}, Class: class}
	}
	netdev := func(name string, gpu int) Pick {
		return Pick{NIC: topology.NIC{Name: name, Netdev: name, NetdevOnly: true}, GPUs: []int{gpu}, Class: topology.PIX}
	}
	tests := []struct {
		name  string
		picks []Pick
		want  string // NIC:GPUs:class per pick
	}{
		{name: "two ports of mlx4_0", picks: []Pick{port("mlx4_0", "mlx4_0", 0, topology.PHB), port("mlx4_0:2", "mlx4_0", 1, topology.PIX)},
			want: "mlx4_0:[0 1]:PIX"},
		{name: "two devices", picks: []Pick{port("mlx5_0", "mlx5_0", 0, topology.PIX), port("mlx5_1", "mlx5_1", 1, topology.PIX)},
			want: "mlx5_0:[0]:PIX mlx5_1:[1]:PIX"},
		{name: "two netdev-only NICs", picks: []Pick{netdev("eth1", 0), netdev("eth2", 1)}, want: "eth1:[0]:PIX eth2:[1]:PIX"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, p := range oneDevicePerPod(tt.picks) {
				got = append(got, fmt.Sprintf("%s:%v:%s", p.NIC.Name, p.GPUs, p.Class))
			}
			if strings.Join(got, " ") != tt.want {
				t.Errorf("got %s, want %s", strings.Join(got, " "), tt.want)
			}
		})
	}
}
