package inventory

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/railcni/rail/pkg/topology/fakesys"
)

// TestRestartWhileNICsSitInPods: a raild that saved its held NICs and then
// restarts while one NIC's netdev (shared mode) and another's whole RDMA
// device (exclusive mode) sit in pods knows both, under their host names.
func TestRestartWhileNICsSitInPods(t *testing.T) {
	root, spec := fakeNode(t, fakesys.Options{})
	saved := filepath.Join(t.TempDir(), "inventory.json")
	holders := map[string]string{"mlx5_0": "ns/shared", "mlx5_2": "ns/exclusive"}
	hosts := map[string]string{"mlx5_0": netdevOf(t, spec, "mlx5_0"), "mlx5_2": netdevOf(t, spec, "mlx5_2")}

	first, err := New(root, nil, func() map[string]string { return holders })
	if err != nil {
		t.Fatal(err)
	}
	must(t, first.SaveHeld(saved))
	must(t, fakesys.RemoveNetdev(root, hosts["mlx5_0"]))
	must(t, os.Remove(filepath.Join(root, "sys/class/infiniband/mlx5_2")))

	tests := []struct {
		name     string
		restore  bool
		wantHost map[string]string // NIC -> netdev expected in the snapshot ("" absent)
	}{
		{name: "without the saved records", restore: false, wantHost: map[string]string{"mlx5_0": "", "mlx5_2": ""}},
		{name: "with the saved records", restore: true, wantHost: hosts},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inv, err := New(root, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if tt.restore {
				must(t, inv.Restore(saved))
			}
			inv.SetHolders(func() map[string]string { return holders })
			snap, err := inv.Rescan("leases loaded")
			if err != nil {
				t.Fatal(err)
			}
			for nic, want := range tt.wantHost {
				got, _ := snap.Machine.NICByName(nic)
				if got.Netdev != want {
					t.Errorf("%s netdev = %q, want %q", nic, got.Netdev, want)
				}
				if want != "" && (snap.InPod[nic] != holders[nic] || got.UverbsName == "" || len(got.Path) == 0) {
					t.Errorf("%s: InPod %q, record %+v; want it held by %s with its uverbs and PCI path", nic, snap.InPod[nic], got, holders[nic])
				}
			}
		})
	}
}

func TestRestore(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, content string
		wantErr       bool
	}{
		{"missing file is the first start", "", false},
		{"empty list", "[]", false},
		{"damaged", "{not json", true},
	}
	root, _ := fakeNode(t, fakesys.Options{})
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, "f"+string(rune('0'+i)))
			if tt.content != "" {
				must(t, os.WriteFile(path, []byte(tt.content), 0o600))
			}
			inv, err := New(root, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := inv.Restore(path); (err != nil) != tt.wantErr {
				t.Fatalf("Restore = %v, want error %v", err, tt.wantErr)
			}
		})
	}
}
