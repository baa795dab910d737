package readiness

import (
	"strings"
	"testing"

	"github.com/railcni/rail/pkg/api"
)

// TestRailWithoutRDMADevice: a vf-mode rail whose VF has no RDMA device of
// its own (igbvf) skips the port checks, saying why, instead of failing
// them for a device that was never there; a rail with one still checks it.
func TestRailWithoutRDMADevice(t *testing.T) {
	c := checker(t, machine(t, "h100x8-cx7x4"), "")
	tests := []struct {
		name string
		rail Rail
		want api.CheckStatus
		msg  string
	}{
		{name: "no RDMA device", rail: Rail{IfName: "net1", Mode: api.ModeVF, GIDIndex: -1}, want: api.CheckSkip, msg: "no RDMA device of its own"},
		{name: "its own", rail: Rail{IfName: "net1", Mode: api.ModeVF, Device: "mlx5_0", Port: 1, GIDIndex: -1}, want: api.CheckPass, msg: "ACTIVE"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := only(c.rail(tt.rail), checkPort)
			if len(got) != 1 || got[0].Status != tt.want || !strings.Contains(got[0].Message, tt.msg) {
				t.Fatalf("port checks %+v, want one %s containing %q", got, tt.want, tt.msg)
			}
		})
	}
}
