package placement

import (
	"strings"
	"testing"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/topology"
)

func TestClaimed(t *testing.T) {
	for _, tc := range []struct {
		name    string
		machine string
		in      Input
		nics    []string
		limits  Limits
		use     func(*Usage)
		guard   bool // frontend-lag's guard: mlx5_2 carries the default route
		now     map[string]topology.Protection
		want    []string // picks with their classes
		wantErr string
	}{
		{name: "the claimed port, with its distance", machine: "h100x8-cx7x4", in: Input{Mode: api.ModeIPoIB, GPUs: []int{0}},
			nics: []string{"mlx5_0"}, want: []string{"mlx5_0 PIX"}},
		{name: "a far claimed port is given, its distance reported", machine: "h100x8-cx7x4", in: Input{Mode: api.ModeIPoIB, GPUs: []int{0}},
			nics: []string{"mlx5_3"}, want: []string{"mlx5_3 SYS"}},
		{name: "every claimed port, in order", machine: "h100x8-cx7x4", in: Input{Mode: api.ModeMove, GPUs: []int{0, 7}},
			nics: []string{"mlx5_3", "mlx5_0"}, want: []string{"mlx5_3 PIX", "mlx5_0 PIX"}},
		{name: "no GPUs: SYS", machine: "h100x8-cx7x4", in: Input{Mode: api.ModeMove}, nics: []string{"mlx5_1"}, want: []string{"mlx5_1 SYS"}},
		{name: "shared beside other pods' children", machine: "h100x8-cx7x4", in: Input{Mode: api.ModeIPoIB},
			use: func(u *Usage) { u.Add("mlx5_0", "a", "s1", "ml/a", api.ModeIPoIB) }, nics: []string{"mlx5_0"}, want: []string{"mlx5_0 SYS"}},
		{name: "move refused while others share it", machine: "h100x8-cx7x4", in: Input{Mode: api.ModeMove},
			use: func(u *Usage) { u.Add("mlx5_0", "a", "s1", "ml/a", api.ModeIPoIB) }, nics: []string{"mlx5_0"}, wantErr: "claimed NIC mlx5_0: shared by"},
		{name: "moved into another pod", machine: "h100x8-cx7x4", in: Input{Mode: api.ModeIPoIB}, use: moveTaken("mlx5_1"),
			nics: []string{"mlx5_1"}, wantErr: "moved into pod ns/holder"},
		{name: "gone", machine: "h100x8-cx7x4", in: Input{Mode: api.ModeMove}, nics: []string{"mlx5_9"}, wantErr: "claimed NIC mlx5_9 is not on this node now"},
		{name: "link layer", machine: "h100x8-cx7x4", in: Input{Mode: api.ModeMacvlan}, nics: []string{"mlx5_0"}, wantErr: "claimed NIC mlx5_0 is InfiniBand; mode macvlan needs Ethernet"},
		{name: "mode not served", machine: "h100x8-cx7x4", in: Input{Mode: api.ModeMove}, limits: Limits{Modes: []api.Mode{api.ModeIPoIB}},
			nics: []string{"mlx5_0"}, wantErr: "mode move is not served"},
		{name: "the node's own NIC is refused", machine: "frontend-lag", guard: true, in: Input{Mode: api.ModeMove},
			nics: []string{"mlx5_2"}, wantErr: "claimed NIC mlx5_2: protected"},
		{name: "the node's own NIC found at ADD is refused", machine: "frontend-lag", guard: true, in: Input{Mode: api.ModeMove},
			now: map[string]topology.Protection{"mlx5_0": defaultRoute}, nics: []string{"mlx5_0"}, wantErr: "claimed NIC mlx5_0: protected"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := node(t, tc.machine)
			if tc.guard {
				var g *fakeGuard
				n, g = frontendNode(t)
				if tc.now != nil {
					g.now = tc.now
				}
			}
			n.Limits = tc.limits
			u := NewUsage()
			if tc.use != nil {
				tc.use(u)
			}
			picks, err := n.Claimed(tc.in, tc.nics, u)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range picks {
				got = append(got, p.NIC.Name+" "+p.Class.String())
				if p.Reason != ClaimedReason {
					t.Errorf("reason %q", p.Reason)
				}
			}
			if strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Errorf("picks %v, want %v", got, tc.want)
			}
		})
	}
}
