package placement

import (
	"strings"
	"testing"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/topology"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

func node(t *testing.T, machine string) *Node {
	t.Helper()
	root := t.TempDir()
	if _, err := fakesys.Write(root, machine, fakesys.Options{}); err != nil {
		t.Fatal(err)
	}
	m, err := topology.Discover(root)
	if err != nil {
		t.Fatal(err)
	}
	return &Node{Machine: m, Rails: map[string]int{"mlx5_0": 0, "mlx5_1": 1, "mlx5_2": 2, "mlx5_3": 3}}
}

func TestChoose(t *testing.T) {
	rail2 := 2
	n := node(t, "h100x8-cx7x4")
	tests := []struct {
		name    string
		in      Input
		use     func(*Usage)
		want    string // picked NICs, comma-separated
		wantErr string
	}{
		{name: "gpus 0..7 use all four", in: Input{GPUs: []int{0, 1, 2, 3, 4, 5, 6, 7}, Mode: api.ModeMove}, want: "mlx5_0,mlx5_1,mlx5_2,mlx5_3"},
		{name: "max nics", in: Input{GPUs: []int{0, 2, 4}, Mode: api.ModeMove, MaxNICs: 2}, want: "mlx5_0,mlx5_1"},
		{name: "rail selector", in: Input{Mode: api.ModeMove, Rail: &rail2}, want: "mlx5_2"},
		{name: "pool binding", in: Input{GPUs: []int{0}, Mode: api.ModeMove, PoolNICs: []string{"mlx5_3"}}, want: "mlx5_3"},
		{name: "selector and pool disjoint", in: Input{Mode: api.ModeMove, NICs: []string{"mlx5_0"}, PoolNICs: []string{"mlx5_3"}}, wantErr: "no NIC in common"},
		{name: "moved NIC is skipped", in: Input{GPUs: []int{0}, Mode: api.ModeMove},
			use: func(u *Usage) { u.Add("mlx5_0", "s/rail0", "s", "ns/a", api.ModeMove) }, want: "mlx5_1"},
		{name: "shared NIC cannot be moved", in: Input{GPUs: []int{0}, Mode: api.ModeMove, NICs: []string{"mlx5_0"}},
			use: func(u *Usage) { u.Add("mlx5_0", "s/rail0", "s", "ns/a", api.ModeIPoIB) }, wantErr: "shared by 1"},
		{name: "ipoib shares", in: Input{GPUs: []int{0}, Mode: api.ModeIPoIB},
			use: func(u *Usage) { u.Add("mlx5_0", "s/rail0", "s", "ns/a", api.ModeIPoIB) }, want: "mlx5_0"},
		{name: "macvlan needs Ethernet", in: Input{GPUs: []int{0}, Mode: api.ModeMacvlan}, wantErr: "Ethernet"},
		{name: "link layer contradicts mode", in: Input{Mode: api.ModeIPoIB, LinkLayer: "Ethernet"}, wantErr: "does not fit mode ipoib"},
		{name: "unknown rail", in: Input{Mode: api.ModeMove, Rail: new(int)}, want: "mlx5_0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			use := NewUsage()
			if tt.use != nil {
				tt.use(use)
			}
			picks, err := n.Choose(tt.in, use)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range picks {
				got = append(got, p.NIC.Name)
			}
			if strings.Join(got, ",") != tt.want {
				t.Fatalf("picked %v, want %s", got, tt.want)
			}
		})
	}
}

func TestUsage(t *testing.T) {
	u := NewUsage()
	u.Add("mlx5_0", "a/rail0", "a", "ns/a", api.ModeMove)
	if sb, ok := u.MovedTo("mlx5_0"); !ok || sb != "a" || u.Users("mlx5_0") != 1 {
		t.Fatalf("MovedTo = %q %v", sb, ok)
	}
	u.Remove("mlx5_0", "a/rail0")
	if _, ok := u.MovedTo("mlx5_0"); ok || u.Users("mlx5_0") != 0 || len(u.byNIC) != 0 {
		t.Fatal("Remove left state behind")
	}
}
