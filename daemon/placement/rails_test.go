package placement

import (
	"testing"

	"github.com/railcni/rail/daemon/config"
	"github.com/railcni/rail/pkg/topology"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

func TestRailIndex(t *testing.T) {
	root := t.TempDir()
	if _, err := fakesys.Write(root, "h100x8-cx7x4", fakesys.Options{}); err != nil {
		t.Fatal(err)
	}
	m, err := topology.Discover(root)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		rails   config.Rails
		want    map[string]int
		wantErr bool
	}{
		{name: "affinity order", want: map[string]int{"mlx5_0": 0, "mlx5_1": 1, "mlx5_2": 2, "mlx5_3": 3}},
		{name: "explicit by name and pci", rails: config.Rails{NICs: map[string]int{"mlx5_3": 0, m.NICs[0].PCI: 5}},
			want: map[string]int{"mlx5_3": 0, m.NICs[0].Name: 5}},
		{name: "unknown nic", rails: config.Rails{NICs: map[string]int{"mlx5_9": 0}}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := &config.Config{Rails: tt.rails}
			got, err := RailIndex(cfg.Rails.NICs, cfg.UseAffinityRails(), m, nil)
			if tt.wantErr {
				if err == nil {
					t.Fatal("want an error")
				}
				return
			}
			if err != nil || len(got) != len(tt.want) {
				t.Fatalf("RailIndex = %v, %v; want %v", got, err, tt.want)
			}
			for nic, r := range tt.want {
				if got[nic] != r {
					t.Errorf("rail of %s = %d, want %d", nic, got[nic], r)
				}
			}
		})
	}
}
