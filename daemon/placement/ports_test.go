package placement

import (
	"fmt"
	"strings"
	"testing"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/rdma"
)

// TestDualPortChoose: on dual-port HCAs every port is a NIC: two GPUs
// under one switch take both ports of their HCA; a PCI address names
// both ports; "mlx4_0" and "mlx4_0:1" name port 1 alone.
func TestDualPortChoose(t *testing.T) {
	n := node(t, "dualport-2s")
	tests := []struct {
		name    string
		in      Input
		moved   string // a NIC held in move mode by another pod
		want    string // picked NICs, comma-separated
		wantErr string
	}{
		{name: "two GPUs, both ports", in: Input{GPUs: []int{0, 1}, Mode: api.ModeMove}, want: "mlx4_0,mlx4_0:2"},
		{name: "port 1 moved: port 2", in: Input{GPUs: []int{0}, Mode: api.ModeMove}, moved: "mlx4_0", want: "mlx4_0:2"},
		{name: "port 2 moved: port 1", in: Input{GPUs: []int{0, 1}, Mode: api.ModeMove}, moved: "mlx4_0:2", want: "mlx4_0"},
		{name: "PCI address, both ports", in: Input{GPUs: []int{0, 1}, Mode: api.ModeMove, NICs: []string{"0000:1a:00.0"}},
			want: "mlx4_0,mlx4_0:2"},
		{name: "device name is port 1", in: Input{GPUs: []int{0, 1}, Mode: api.ModeMove, NICs: []string{"mlx4_0"}}, want: "mlx4_0"},
		{name: "explicit port 1", in: Input{GPUs: []int{1}, Mode: api.ModeMove, NICs: []string{"mlx4_0:1"}}, want: "mlx4_0"},
		{name: "pool bound to port 2", in: Input{GPUs: []int{0, 1}, Mode: api.ModeMove, PoolNICs: []string{"mlx4_0:2"}}, want: "mlx4_0:2"},
		{name: "no port 3", in: Input{GPUs: []int{0}, Mode: api.ModeMove, NICs: []string{"mlx4_0:3"}},
			wantErr: `"mlx4_0:3" is not an RDMA device on this node (have mlx4_0, mlx4_0:2, mlx4_1, mlx4_1:2, mlx5_0)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			use := NewUsage()
			if tt.moved != "" {
				use.Add(tt.moved, "s/rail0", "s", "ns/a", api.ModeMove)
			}
			if got := outcome(n.Choose(tt.in, use)); !matches(got, tt.want, tt.wantErr) {
				t.Errorf("got %s, want %s%s", got, tt.want, tt.wantErr)
			}
		})
	}
}

// outcome prints what Choose did: the picked NICs, comma-separated, or
// "error: ..." when it failed.
func outcome(picks []Pick, err error) string {
	if err != nil {
		return "error: " + err.Error()
	}
	names := make([]string, len(picks))
	for i, p := range picks {
		names[i] = p.NIC.Name
	}
	return strings.Join(names, ",")
}

func matches(got, want, wantErr string) bool {
	if wantErr != "" {
		return strings.HasPrefix(got, "error: ") && strings.Contains(got, wantErr)
	}
	return got == want
}

// TestDualPortExclusiveRDMA: in exclusive RDMA netns mode moving one port
// moves its whole device, so a port whose sibling sits in a pod is taken,
// and one pod gets one port per device (its GPUs are as close to either).
// Before, a second pod was placed on the sibling and its ADD failed at the
// device move; a pod given both ports failed at the second move.
func TestDualPortExclusiveRDMA(t *testing.T) {
	n := node(t, "dualport-2s")
	n.RDMANetns = rdma.NetnsExclusive
	hca := []string{"0000:1a:00.0"} // both ports of mlx4_0
	tests := []struct {
		name     string
		in       Input
		moved    string
		want     string
		wantGPUs string // GPUs of the first pick
		wantErr  string
	}{
		{name: "two GPUs: one device, both GPUs on port 1", in: Input{GPUs: []int{0, 1}, Mode: api.ModeMove, NICs: hca},
			want: "mlx4_0", wantGPUs: "[0 1]"},
		{name: "port 1 moved: port 2 is taken too", in: Input{GPUs: []int{0}, Mode: api.ModeMove, NICs: hca}, moved: "mlx4_0",
			wantErr: "mlx4_0:2 RDMA device mlx4_0 moved into pod ns/a with mlx4_0"},
		{name: "port 2 moved: port 1 is taken too", in: Input{GPUs: []int{0, 1}, Mode: api.ModeMove, NICs: hca}, moved: "mlx4_0:2",
			wantErr: "mlx4_0 RDMA device mlx4_0 moved into pod ns/a with mlx4_0:2"},
		{name: "port 1 moved: another device", in: Input{GPUs: []int{0}, Mode: api.ModeMove}, moved: "mlx4_0",
			want: "mlx4_1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			use := NewUsage()
			if tt.moved != "" {
				use.Add(tt.moved, "s/rail0", "s", "ns/a", api.ModeMove)
			}
			picks, err := n.Choose(tt.in, use)
			if got := outcome(picks, err); !matches(got, tt.want, tt.wantErr) {
				t.Fatalf("got %s, want %s%s", got, tt.want, tt.wantErr)
			}
			if tt.wantGPUs != "" {
				if got := fmt.Sprint(picks[0].GPUs); got != tt.wantGPUs {
					t.Errorf("GPUs of %s = %s, want %s", picks[0].NIC.Name, got, tt.wantGPUs)
				}
			}
		})
	}
}
