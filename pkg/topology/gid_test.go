package topology_test

import (
	"net/netip"
	"os"
	"path/filepath"
	"testing"

	"github.com/railcni/rail/pkg/topology"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

func TestGIDIndex(t *testing.T) {
	const (
		zero = "0000:0000:0000:0000:0000:0000:0000:0000"
		link = "fe80:0000:0000:0000:0a00:27ff:fe00:0001"
		v4   = "0000:0000:0000:0000:0000:ffff:0a38:0005" // 10.56.0.5
		v6   = "fd00:0000:0000:0000:0000:0000:0000:0005"
	)
	tests := []struct {
		name  string
		gids  []string
		types []string
		addr  string
		want  int
		ok    bool
	}{
		{"RoCE v2 preferred over v1", []string{link, v4, v4}, []string{"RoCE v2", "IB/RoCE v1", "RoCE v2"}, "10.56.0.5", 2, true},
		{"v1 only", []string{link, zero, v4}, []string{"IB/RoCE v1", "IB/RoCE v1", "IB/RoCE v1"}, "10.56.0.5", 2, true},
		{"no types directory entries", []string{link, v4}, nil, "10.56.0.5", 1, true},
		{"IPv6 address", []string{link, v6, v6}, []string{"IB/RoCE v1", "IB/RoCE v1", "RoCE v2"}, "fd00::5", 2, true},
		{"absent", []string{link, zero}, nil, "10.56.0.5", 0, false},
		{"garbage entry skipped", []string{"not-a-gid", v4}, nil, "10.56.0.5", 1, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			writeGIDs(t, root, "mlx5_0", tt.gids, tt.types)
			got, err := portReader(t, root).GIDIndex("mlx5_0", 1, netip.MustParseAddr(tt.addr))
			if (err == nil) != tt.ok || got != tt.want {
				t.Fatalf("GIDIndex = %d, %v; want %d, ok=%v", got, err, tt.want, tt.ok)
			}
		})
	}
	if _, err := portReader(t, withSys(t)).GIDIndex("mlx5_0", 1, netip.MustParseAddr("10.0.0.1")); err == nil {
		t.Fatal("a port without a GID table must be an error")
	}
}

// BenchmarkGIDScanMiss is the fallback CreateContainer pays when the GID
// was not cached at RunPodSandbox: a scan of a full 256-entry table whose
// match is the last entry.
// fullTable is the size of an mlx5 GID table as the reader bounds it.
const fullTable = 256

func BenchmarkGIDScanMiss(b *testing.B) {
	root := b.TempDir()
	gids := make([]string, fullTable)
	for i := range gids {
		gids[i] = "0000:0000:0000:0000:0000:0000:0000:0000"
	}
	gids[fullTable-1] = "0000:0000:0000:0000:0000:ffff:0a38:0005"
	writeGIDs(b, root, "mlx5_0", gids, nil)
	ports := portReader(b, root)
	addr := netip.MustParseAddr("10.56.0.5")
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		idx, err := ports.GIDIndex("mlx5_0", 1, addr)
		if err != nil || idx != fullTable-1 {
			b.Fatalf("scan = %d, %v", idx, err)
		}
	}
}

func portReader(t testing.TB, root string) *topology.PortReader {
	t.Helper()
	r, err := topology.NewPortReader(root)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// withSys is an empty machine: a root holding only sys/.
func withSys(t testing.TB) string {
	t.Helper()
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, "sys"), 0o755); err != nil {
		t.Fatal(err)
	}
	return root
}

func writeGIDs(t testing.TB, root, nic string, gids, types []string) {
	t.Helper()
	if err := fakesys.WriteGIDs(root, nic, 1, gids, types); err != nil {
		t.Fatal(err)
	}
}

func TestPortState(t *testing.T) {
	tests := []struct {
		name, content, want string
		ok                  bool
	}{
		{"numbered", "4: ACTIVE\n", "ACTIVE", true},
		{"down", "1: DOWN\n", "DOWN", true},
		{"bare name", "ACTIVE\n", "ACTIVE", true},
		{"missing", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := withSys(t)
			dir := filepath.Join(root, "sys/class/infiniband/mlx5_0/ports/1")
			if tt.content != "" {
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, "state"), []byte(tt.content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, err := portReader(t, root).State("mlx5_0", 1)
			if (err == nil) != tt.ok || got != tt.want {
				t.Fatalf("State = %q, %v; want %q, ok=%v", got, err, tt.want, tt.ok)
			}
		})
	}
}
