package serve

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/railcni/rail/ipam"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

// TestServeRefusesDamagedStore runs `raild serve` on a damaged store: it
// stops before serving, with one line naming the file and the way out.
func TestServeRefusesDamagedStore(t *testing.T) {
	tests := []struct {
		name   string
		damage func(t *testing.T, store string)
		want   string
	}{
		{"empty file", func(t *testing.T, store string) {
			if err := os.WriteFile(store, nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}, "empty"},
		{"older copy put back", func(t *testing.T, store string) {
			pools, err := ipam.NewPools([]ipam.PoolConfig{{Name: "p", Subnet: "10.77.0.0/24"}}, "n1")
			if err != nil {
				t.Fatal(err)
			}
			a, err := ipam.Open(store, pools, ipam.Options{})
			if err != nil {
				t.Fatal(err)
			}
			old, err := os.ReadFile(store)
			if err == nil {
				_, err = a.Allocate(ipam.Request{Sandbox: "sb1", IfName: "rail0", Pool: "p"})
			}
			if err != nil {
				t.Fatal(err)
			}
			a.Close()
			if err := os.WriteFile(store, old, 0o600); err != nil {
				t.Fatal(err)
			}
		}, "rolled back"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root, stateDir := t.TempDir(), t.TempDir()
			if _, err := fakesys.Write(root, "lab-1x1", fakesys.Options{}); err != nil {
				t.Fatal(err)
			}
			store := filepath.Join(stateDir, "leases.db")
			tt.damage(t, store)
			err := Run([]string{"--root", root, "--state-dir", stateDir, "--socket", filepath.Join(t.TempDir(), "raild.sock"),
				"--node-name", "n1", "--log-level", "error"})
			if err == nil {
				t.Fatal("raild serve started on a damaged store")
			}
			line := "raild serve: " + err.Error() // as main prints it
			for _, want := range []string{store, tt.want, "raild recover", "--state-dir " + stateDir} {
				if !strings.Contains(line, want) {
					t.Errorf("%q: want %q in it", line, want)
				}
			}
			if strings.Contains(line, "\n") {
				t.Errorf("%q: want one line", line)
			}
		})
	}
}
