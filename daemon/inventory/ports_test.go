package inventory

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/railcni/rail/pkg/topology/fakesys"
)

// TestDualPortRescan: each port of a dual-port HCA is followed on its own:
// its state change, its netdev leaving for a pod while a lease holds it,
// and (exclusive mode) the whole device leaving with the held port.
func TestDualPortRescan(t *testing.T) {
	tests := []struct {
		name    string
		holders map[string]string
		change  func(t *testing.T, root string)
		want    string // per target: name netdev state, then InPod and Changes
	}{
		{name: "port 2 DOWN", change: func(t *testing.T, root string) {
			must(t, fakesys.SetPortState(root, "mlx4_0", 2, "DOWN"))
		}, want: "mlx4_0 ibp26s0 ACTIVE; mlx4_0:2 ibp26s0d1 DOWN; inpod map[]; changes [{mlx4_0:2 ACTIVE DOWN}]"},
		{name: "held port 2's netdev in the pod (shared mode)", holders: map[string]string{"mlx4_0:2": "ns/a"},
			change: func(t *testing.T, root string) { must(t, fakesys.RemoveNetdev(root, "ibp26s0d1")) },
			want:   "mlx4_0 ibp26s0 ACTIVE; mlx4_0:2 ibp26s0d1 ACTIVE; inpod map[mlx4_0:2:ns/a]; changes []"},
		{name: "held port 2's device in the pod (exclusive mode)", holders: map[string]string{"mlx4_0:2": "ns/a"},
			change: func(t *testing.T, root string) {
				must(t, os.Remove(filepath.Join(root, "sys/class/infiniband/mlx4_0")))
			}, want: "mlx4_0 - -; mlx4_0:2 ibp26s0d1 ACTIVE; inpod map[mlx4_0:2:ns/a]; changes [{mlx4_0 ACTIVE }]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			if _, err := fakesys.Write(root, "dualport-2s", fakesys.Options{}); err != nil {
				t.Fatal(err)
			}
			inv, err := New(root, nil, func() map[string]string { return tt.holders })
			if err != nil {
				t.Fatal(err)
			}
			tt.change(t, root)
			snap, err := inv.Rescan("test")
			if err != nil {
				t.Fatal(err)
			}
			var parts []string
			for _, name := range []string{"mlx4_0", "mlx4_0:2"} {
				nic, ok := snap.Machine.NICByName(name)
				if !ok {
					parts = append(parts, name+" - -")
					continue
				}
				parts = append(parts, fmt.Sprintf("%s %s %s", name, nic.Netdev, nic.State))
			}
			got := strings.Join(parts, "; ") + fmt.Sprintf("; inpod %v; changes %v", snap.InPod, snap.Changes)
			if got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}
