package inventory

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/railcni/rail/pkg/topology"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

// fakeNode writes a built-in machine and returns its root and spec.
func fakeNode(t testing.TB, opt fakesys.Options) (string, *fakesys.Spec) {
	t.Helper()
	root := t.TempDir()
	spec, err := fakesys.Write(root, "h100x8-cx7x4", opt)
	if err != nil {
		t.Fatal(err)
	}
	return root, spec
}

func nicOf(t *testing.T, s *Snapshot, name string) topology.NIC {
	t.Helper()
	nic, ok := s.Machine.NICByName(name)
	if !ok {
		t.Fatalf("snapshot %d has no %s", s.Version, name)
	}
	return nic
}

// TestRescan changes the machine's files under a live inventory and checks
// that each rescan publishes a new version showing the change, with a NIC
// held by a pod kept known while the host no longer shows all of it.
func TestRescan(t *testing.T) {
	tests := []struct {
		name    string
		holders map[string]string
		change  func(t *testing.T, root string, spec *fakesys.Spec)
		check   func(t *testing.T, s *Snapshot)
	}{
		{name: "port DOWN", change: func(t *testing.T, root string, _ *fakesys.Spec) {
			must(t, fakesys.SetPortState(root, "mlx5_1", 1, "DOWN"))
		}, check: func(t *testing.T, s *Snapshot) {
			if nic := nicOf(t, s, "mlx5_1"); nic.State != "DOWN" {
				t.Errorf("mlx5_1 state = %q, want DOWN", nic.State)
			}
		}},
		{name: "port DOWN then UP", change: func(t *testing.T, root string, _ *fakesys.Spec) {
			must(t, fakesys.SetPortState(root, "mlx5_1", 1, "DOWN"))
			must(t, fakesys.SetPortState(root, "mlx5_1", 1, "ACTIVE"))
		}, check: func(t *testing.T, s *Snapshot) {
			if nic := nicOf(t, s, "mlx5_1"); nic.State != "ACTIVE" {
				t.Errorf("mlx5_1 state = %q, want ACTIVE", nic.State)
			}
		}},
		{name: "held NIC whose netdev moved into the pod (shared mode)", holders: map[string]string{"mlx5_0": "ns/a"},
			change: func(t *testing.T, root string, spec *fakesys.Spec) {
				must(t, fakesys.RemoveNetdev(root, netdevOf(t, spec, "mlx5_0")))
			}, check: func(t *testing.T, s *Snapshot) {
				if nic := nicOf(t, s, "mlx5_0"); nic.Netdev == "" || nic.UverbsName == "" {
					t.Errorf("mlx5_0 lost its host name or uverbs: %+v", nic)
				}
				if s.InPod["mlx5_0"] != "ns/a" {
					t.Errorf("InPod = %v, want mlx5_0 in ns/a", s.InPod)
				}
			}},
		{name: "held NIC gone from the host (exclusive mode)", holders: map[string]string{"mlx5_2": "ns/b"},
			change: func(t *testing.T, root string, _ *fakesys.Spec) {
				must(t, os.Remove(filepath.Join(root, "sys/class/infiniband/mlx5_2")))
			}, check: func(t *testing.T, s *Snapshot) {
				if nic := nicOf(t, s, "mlx5_2"); nic.Netdev == "" {
					t.Errorf("mlx5_2 lost its host name: %+v", nic)
				}
				if s.InPod["mlx5_2"] != "ns/b" {
					t.Errorf("InPod = %v, want mlx5_2 in ns/b", s.InPod)
				}
			}},
		{name: "held NIC read while its RDMA device moves (uverbs re-registering)", holders: map[string]string{"mlx5_2": "ns/b"},
			change: func(t *testing.T, root string, _ *fakesys.Spec) {
				must(t, os.Remove(filepath.Join(root, "sys/class/infiniband_verbs/uverbs2")))
			}, check: func(t *testing.T, s *Snapshot) {
				if nic := nicOf(t, s, "mlx5_2"); nic.UverbsName != "uverbs2" || nic.Uverbs == nil {
					t.Errorf("mlx5_2 lost its uverbs device: %+v", nic)
				}
			}},
		{name: "uverbs of a NIC nobody holds gone", change: func(t *testing.T, root string, _ *fakesys.Spec) {
			must(t, os.Remove(filepath.Join(root, "sys/class/infiniband_verbs/uverbs3")))
		}, check: func(t *testing.T, s *Snapshot) {
			if nic := nicOf(t, s, "mlx5_3"); nic.UverbsName != "" || nic.Uverbs != nil {
				t.Errorf("mlx5_3 = %+v, want it shown without uverbs", nic)
			}
		}},
		{name: "NIC nobody holds disappears", change: func(t *testing.T, root string, _ *fakesys.Spec) {
			must(t, os.Remove(filepath.Join(root, "sys/class/infiniband/mlx5_3")))
		}, check: func(t *testing.T, s *Snapshot) {
			if _, ok := s.Machine.NICByName("mlx5_3"); ok || len(s.InPod) != 0 {
				t.Errorf("mlx5_3 still listed (InPod %v)", s.InPod)
			}
		}},
		{name: "netdev of a NIC nobody holds gone", change: func(t *testing.T, root string, spec *fakesys.Spec) {
			must(t, fakesys.RemoveNetdev(root, netdevOf(t, spec, "mlx5_3")))
		}, check: func(t *testing.T, s *Snapshot) {
			if nic := nicOf(t, s, "mlx5_3"); nic.Netdev != "" || len(s.InPod) != 0 {
				t.Errorf("mlx5_3 = %+v, InPod %v; want it shown without netdev", nic, s.InPod)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root, spec := fakeNode(t, fakesys.Options{})
			inv, err := New(root, nil, func() map[string]string { return tt.holders })
			if err != nil {
				t.Fatal(err)
			}
			first := inv.Current()
			tt.change(t, root, spec)
			snap, err := inv.Rescan("test")
			if err != nil {
				t.Fatal(err)
			}
			if snap.Version != first.Version+1 || inv.Current() != snap || snap.Cause != "test" {
				t.Fatalf("published version %d (%q), want %d", snap.Version, snap.Cause, first.Version+1)
			}
			tt.check(t, snap)
			if nicOf(t, first, "mlx5_1").State != "ACTIVE" {
				t.Error("the first snapshot changed after publication")
			}
		})
	}
}

func TestNewFailsWithoutSys(t *testing.T) {
	if _, err := New(t.TempDir(), nil, nil); err == nil {
		t.Fatal("a root without sys/ must fail")
	}
}

func netdevOf(t *testing.T, spec *fakesys.Spec, nic string) string {
	t.Helper()
	n, ok := spec.NIC(nic)
	if !ok || n.Netdev == "" {
		t.Fatalf("fake machine has no netdev for %s", nic)
	}
	return n.Netdev
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
