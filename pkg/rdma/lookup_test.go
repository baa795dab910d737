package rdma

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/railcni/rail/pkg/netnstest"
)

// TestInNetns: this host has no RDMA device (and maybe no RDMA
// subsystem), so no netns holds mlx5_0; a netns that does not exist is an
// error naming it.
func TestInNetns(t *testing.T) {
	netnstest.RequireRoot(t, "creates a netns")
	name := fmt.Sprintf("rdma-in-%08x", rand.Uint32())
	netnstest.Named(t, name)
	tests := []struct {
		path   string
		errHas string // "": no error, or the kernel has no RDMA subsystem
	}{
		{path: "/var/run/netns/" + name},
		{path: "/var/run/netns/rdma-in-never-made", errHas: "rdma-in-never-made"},
	}
	for _, tt := range tests {
		in, err := InNetns(tt.path, "mlx5_0")
		if in {
			t.Fatalf("%s: mlx5_0 found", tt.path)
		}
		switch {
		case tt.errHas != "" && (err == nil || !strings.Contains(err.Error(), tt.errHas)):
			t.Fatalf("%s: err %v, want one naming %q", tt.path, err, tt.errHas)
		case tt.errHas == "" && err != nil && !strings.Contains(err.Error(), "no RDMA subsystem"):
			t.Fatalf("%s: %v", tt.path, err)
		}
	}
}
