package inventory

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/railcni/rail/pkg/topology/fakesys"
)

// TestRestartWhileNICsSitInPods: a raild that saved its NIC records and
// then restarts while one NIC's netdev (shared mode) and another's whole
// RDMA device (exclusive mode) sit in pods knows both, under their host
// names, whether the records were saved while the pods held the NICs or
// before any lease (raild killed right after the ADD, before a rescan).
func TestRestartWhileNICsSitInPods(t *testing.T) {
	holders := map[string]string{"mlx5_0": "ns/shared", "mlx5_2": "ns/exclusive"}
	tests := []struct {
		name       string
		savedWith  map[string]string // the holders when the records were saved
		restore    bool
		wantRecord bool
	}{
		{name: "without the saved records", savedWith: holders, restore: false},
		{name: "saved while held", savedWith: holders, restore: true, wantRecord: true},
		{name: "saved before any lease", savedWith: nil, restore: true, wantRecord: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root, spec := fakeNode(t, fakesys.Options{})
			saved := filepath.Join(t.TempDir(), "inventory.json")
			hosts := map[string]string{"mlx5_0": netdevOf(t, spec, "mlx5_0"), "mlx5_2": netdevOf(t, spec, "mlx5_2")}
			first, err := New(root, nil, func() map[string]string { return tt.savedWith })
			if err != nil {
				t.Fatal(err)
			}
			must(t, first.SaveRecords(saved))
			must(t, fakesys.RemoveNetdev(root, hosts["mlx5_0"]))
			must(t, os.Remove(filepath.Join(root, "sys/class/infiniband/mlx5_2")))

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
			for nic, host := range hosts {
				got, _ := snap.Machine.NICByName(nic)
				want := ""
				if tt.wantRecord {
					want = host
				}
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
