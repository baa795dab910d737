package placement

import (
	"strings"
	"testing"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/topology"
)

func bound(c topology.Class, source string) *Bound { return &Bound{Max: c, Source: source} }

func TestChooseDistanceBound(t *testing.T) {
	n := node(t, "h100x8-cx7x4")
	moveTaken := func(nics ...string) func(*Usage) {
		return func(u *Usage) {
			for _, nic := range nics {
				u.Add(nic, "s/"+nic, "s", "ns/holder", api.ModeMove)
			}
		}
	}
	tests := []struct {
		name    string
		in      Input
		use     func(*Usage)
		want    string
		wantErr []string
	}{
		{name: "no bound: a SYS NIC is taken quietly", in: Input{GPUs: []int{0}, Mode: api.ModeMove},
			use: moveTaken("mlx5_0", "mlx5_1"), want: "mlx5_2:SYS"},
		{name: "bound met by the closest NIC", in: Input{GPUs: []int{0}, Mode: api.ModeMove, MaxDistance: bound(topology.PIX, "netconf maxDistance")},
			want: "mlx5_0:PIX"},
		{name: "bound met by the next class", in: Input{GPUs: []int{0}, Mode: api.ModeMove, MaxDistance: bound(topology.PHB, "netconf maxDistance")},
			use: moveTaken("mlx5_0"), want: "mlx5_1:PHB"},
		{name: "bound refuses a SYS NIC and names who holds the closer ones",
			in:  Input{GPUs: []int{0}, Mode: api.ModeMove, MaxDistance: bound(topology.PHB, "netconf maxDistance")},
			use: moveTaken("mlx5_0", "mlx5_1"),
			wantErr: []string{"GPU 0", "mlx5_2 is SYS", "beyond netconf maxDistance PHB",
				"mlx5_0 PIX (moved into pod ns/holder)", "mlx5_1 PHB (moved into pod ns/holder)"}},
		{name: "shared holders are named to a move request",
			in: Input{GPUs: []int{0}, Mode: api.ModeMove, MaxDistance: bound(topology.PIX, "pool a maxDistance")},
			use: func(u *Usage) {
				u.Add("mlx5_0", "s/rail0", "s", "ns/shared", api.ModeIPoIB)
			},
			wantErr: []string{"mlx5_1 is PHB", "beyond pool a maxDistance PIX", "mlx5_0 PIX (shared by 1 pod interface(s) of ns/shared in ipoib mode"}},
		{name: "per-NIC bound of the NIC's pool", in: Input{GPUs: []int{4}, Mode: api.ModeMove,
			NICBounds: map[string]*Bound{"mlx5_3": bound(topology.PIX, "pool r3 maxDistance")}},
			use: moveTaken("mlx5_2"), wantErr: []string{"GPU 4", "mlx5_3 is PHB", "beyond pool r3 maxDistance PIX", "mlx5_2 PIX (moved into pod ns/holder)"}},
		{name: "the tighter of netconf and pool bounds wins", in: Input{GPUs: []int{4}, Mode: api.ModeMove,
			MaxDistance: bound(topology.PIX, "netconf maxDistance"),
			NICBounds:   map[string]*Bound{"mlx5_3": bound(topology.SYS, "pool r3 maxDistance")}},
			use: moveTaken("mlx5_2"), wantErr: []string{"beyond netconf maxDistance PIX"}},
		{name: "every GPU beyond the bound is named", in: Input{GPUs: []int{0, 1}, Mode: api.ModeMove, MaxDistance: bound(topology.NODE, "netconf maxDistance")},
			use: moveTaken("mlx5_0", "mlx5_1"), wantErr: []string{"GPU 0: the closest free NIC", "GPU 1: the closest free NIC"}},
		{name: "no GPUs known and a bound", in: Input{Mode: api.ModeMove, MaxDistance: bound(topology.PHB, "netconf maxDistance")},
			wantErr: []string{"no GPUs known", "name the pod's GPUs"}},
		{name: "SYS bound is permissive", in: Input{GPUs: []int{0}, Mode: api.ModeMove, MaxDistance: bound(topology.SYS, "netconf maxDistance")},
			use: moveTaken("mlx5_0", "mlx5_1"), want: "mlx5_2:SYS"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			use := NewUsage()
			if tt.use != nil {
				tt.use(use)
			}
			picks, err := n.Choose(tt.in, use)
			if len(tt.wantErr) > 0 {
				if err == nil {
					t.Fatalf("picked %v, want an error", picks)
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q lacks %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range picks {
				got = append(got, p.NIC.Name+":"+p.Class.String())
			}
			if strings.Join(got, ",") != tt.want {
				t.Fatalf("picked %v, want %s", got, tt.want)
			}
		})
	}
}

func TestTighter(t *testing.T) {
	a, b := bound(topology.PHB, "a"), bound(topology.PIX, "b")
	tests := []struct {
		name       string
		x, y, want *Bound
	}{
		{"both nil", nil, nil, nil},
		{"first only", a, nil, a},
		{"second only", nil, b, b},
		{"second tighter", a, b, b},
		{"first tighter", b, a, b},
	}
	for _, tt := range tests {
		if got := Tighter(tt.x, tt.y); got != tt.want {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
}
