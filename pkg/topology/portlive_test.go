package topology_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/railcni/rail/pkg/topology"
)

func TestPortLinkLayerAndGID(t *testing.T) {
	root := withSys(t)
	writeGIDs(t, root, "mlx5_0", []string{"fe80:0000:0000:0000:0a00:27ff:fe00:0001", "0000:0000:0000:0000:0000:ffff:0a38:0005", "garbage"}, nil)
	dir := filepath.Join(root, "sys/class/infiniband/mlx5_0/ports/1")
	if err := os.WriteFile(filepath.Join(dir, "link_layer"), []byte("Ethernet\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := portReader(t, root)
	if ll, err := r.LinkLayer("mlx5_0", 1); err != nil || ll != topology.Ethernet {
		t.Fatalf("LinkLayer = %q, %v", ll, err)
	}
	if _, err := r.LinkLayer("mlx5_0", 2); err == nil {
		t.Fatal("no error for a port without link_layer")
	}
	tests := []struct {
		index int
		want  string // "": an error
	}{
		{0, "fe80::a00:27ff:fe00:1"},
		{1, "::ffff:10.56.0.5"},
		{2, ""},
		{3, ""},
	}
	for _, tt := range tests {
		gid, err := r.GID("mlx5_0", 1, tt.index)
		if tt.want == "" {
			if err == nil {
				t.Errorf("GID %d = %s, want an error", tt.index, gid)
			}
			continue
		}
		if err != nil || gid.String() != tt.want {
			t.Errorf("GID %d = %s, %v; want %s", tt.index, gid, err, tt.want)
		}
	}
}
