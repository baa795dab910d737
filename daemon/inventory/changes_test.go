package inventory

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/railcni/rail/pkg/topology/fakesys"
)

func TestChanges(t *testing.T) {
	tests := []struct {
		name   string
		change func(t *testing.T, root string)
		want   string
	}{
		{"nothing", func(*testing.T, string) {}, "[]"},
		{"port down", func(t *testing.T, root string) { must(t, fakesys.SetPortState(root, "mlx5_1", 1, "DOWN")) },
			"[{mlx5_1 ACTIVE DOWN}]"},
		{"NIC gone", func(t *testing.T, root string) {
			must(t, os.Remove(filepath.Join(root, "sys/class/infiniband/mlx5_3")))
		}, "[{mlx5_3 ACTIVE }]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root, _ := fakeNode(t, fakesys.Options{})
			inv, err := New(root, nil, func() map[string]string { return map[string]string{"mlx5_1": "ns/a"} })
			if err != nil {
				t.Fatal(err)
			}
			if got := inv.Current().Changes; got != nil {
				t.Fatalf("first snapshot changes = %v", got)
			}
			tt.change(t, root)
			snap, err := inv.Rescan("test")
			if err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprint(snap.Changes); got != tt.want && !(tt.want == "[]" && len(snap.Changes) == 0) {
				t.Errorf("changes = %s, want %s", got, tt.want)
			}
			if snap.Holders["mlx5_1"] != "ns/a" {
				t.Errorf("holders = %v", snap.Holders)
			}
		})
	}
}
