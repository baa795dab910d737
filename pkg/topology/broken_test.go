package topology_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/railcni/rail/pkg/topology"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

// hostPath resolves a machine path below root to the real directory.
func hostPath(t *testing.T, root, p string) string {
	t.Helper()
	real, err := filepath.EvalSymlinks(filepath.Join(root, p))
	if err != nil {
		t.Fatalf("resolve %s: %v", p, err)
	}
	return real
}

func mustRemove(t *testing.T, p string) {
	t.Helper()
	if err := os.RemoveAll(p); err != nil {
		t.Fatal(err)
	}
}

func mustWrite(t *testing.T, p, content string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustRelink(t *testing.T, p, target string) {
	t.Helper()
	mustRemove(t, p)
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
}

func hasProblem(m *topology.Machine, device, reason string) bool {
	for _, p := range m.Problems {
		if p.Device == device && strings.Contains(p.Reason, reason) {
			return true
		}
	}
	return false
}

// TestBrokenTrees damages a written machine in one way each and checks
// that discovery reports it and still describes everything else.
func TestBrokenTrees(t *testing.T) {
	const gpu0 = "0000:18:00.0"
	tests := []struct {
		name   string
		damage func(t *testing.T, root string)
		device string // Problem.Device expected
		reason string // substring of Problem.Reason expected
		check  func(t *testing.T, m *topology.Machine)
		gpus   int
		nics   int
	}{
		{
			name: "gpu numa_node missing",
			damage: func(t *testing.T, root string) {
				mustRemove(t, hostPath(t, root, "/sys/bus/pci/devices/"+gpu0+"/numa_node"))
			},
			device: "gpu " + gpu0, reason: "numa_node missing", gpus: 8, nics: 4,
			check: func(t *testing.T, m *topology.Machine) {
				if m.GPUs[0].NUMA != -1 {
					t.Errorf("GPU0 NUMA = %d, want -1", m.GPUs[0].NUMA)
				}
				if c := m.Distance(m.GPUs[0], m.NICs[0]); c != topology.PIX {
					t.Errorf("GPU0-mlx5_0 = %s, want PIX: the tree still says so", c)
				}
			},
		},
		{
			name: "gpu numa_node -1",
			damage: func(t *testing.T, root string) {
				mustWrite(t, hostPath(t, root, "/sys/bus/pci/devices/"+gpu0+"/numa_node"), "-1\n")
			},
			device: "gpu " + gpu0, reason: "numa_node is -1", gpus: 8, nics: 4,
		},
		{
			name:   "gpu driver link dangling",
			damage: func(t *testing.T, root string) { mustRemove(t, hostPath(t, root, "/sys/bus/pci/devices/"+gpu0)) },
			device: "gpu " + gpu0, reason: "dangling link", gpus: 8, nics: 4,
			check: func(t *testing.T, m *topology.Machine) {
				g := m.GPUs[0]
				if g.PCI != gpu0 || g.Root != "" || g.UUID == "" {
					t.Errorf("GPU0 = %+v, want its address and UUID but no location", g)
				}
				if c := m.Distance(g, m.NICs[0]); c != topology.SYS {
					t.Errorf("GPU0 with unknown location: %s, want SYS", c)
				}
			},
		},
		{
			name:   "gpu information missing",
			damage: func(t *testing.T, root string) { mustRemove(t, filepath.Join(root, "proc/driver/nvidia/gpus", gpu0)) },
			device: "gpu " + gpu0, reason: "information missing", gpus: 8, nics: 4,
			check: func(t *testing.T, m *topology.Machine) {
				if g := m.GPUs[0]; g.UUID != "" || g.Minor != -1 || g.Root == "" {
					t.Errorf("GPU0 = %+v, want no UUID, minor -1, location known", g)
				}
			},
		},
		{
			name: "gpu uuid hidden",
			damage: func(t *testing.T, root string) {
				mustWrite(t, filepath.Join(root, "proc/driver/nvidia/gpus", gpu0, "information"),
					"Model: \t\t NVIDIA H100\nGPU UUID: \t GPU-????????-????-????-????-????????????\nDevice Minor: \t 0\n")
			},
			device: "gpu " + gpu0, reason: "UUID hidden", gpus: 8, nics: 4,
		},
		{
			name: "nic without netdev",
			damage: func(t *testing.T, root string) {
				mustRemove(t, hostPath(t, root, "/sys/class/infiniband/mlx5_0/device/net"))
			},
			device: "mlx5_0", reason: "port 1 has no netdev", gpus: 8, nics: 4,
			check: func(t *testing.T, m *topology.Machine) {
				n, _ := m.NICByName("mlx5_0")
				if ok, why := m.Usable(n, topology.Request{}); ok || why != "no netdev" {
					t.Errorf("Usable = %v %q, want false \"no netdev\"", ok, why)
				}
				if aff := m.Affinity(); aff[0] != "mlx5_1" || aff[1] != "mlx5_1" {
					t.Errorf("affinity %v: GPU0/1 should fall back to mlx5_1 (PHB)", aff)
				}
			},
		},
		{
			name: "nic device link dangling",
			damage: func(t *testing.T, root string) {
				mustRelink(t, hostPath(t, root, "/sys/class/infiniband/mlx5_0")+"/device", "../../../0000:ff:00.0")
			},
			device: "mlx5_0", reason: "dangling link", gpus: 8, nics: 4,
			check: func(t *testing.T, m *topology.Machine) {
				n, _ := m.NICByName("mlx5_0")
				if n.PCI != "" || n.Root != "" || n.State != "ACTIVE" {
					t.Errorf("mlx5_0 = %+v, want ports but no location", n)
				}
			},
		},
		{
			name: "nic device link leaves the root",
			damage: func(t *testing.T, root string) {
				mustRelink(t, hostPath(t, root, "/sys/class/infiniband/mlx5_0")+"/device", "/")
			},
			device: "mlx5_0", reason: "outside the root", gpus: 8, nics: 4,
		},
		{
			name:   "class entry dangling",
			damage: func(t *testing.T, root string) { mustRemove(t, hostPath(t, root, "/sys/class/infiniband/mlx5_1")) },
			device: "mlx5_1", reason: "dangling link; skipped", gpus: 8, nics: 3,
		},
		{
			name: "ports missing",
			damage: func(t *testing.T, root string) {
				mustRemove(t, hostPath(t, root, "/sys/class/infiniband/mlx5_0/ports"))
			},
			device: "mlx5_0", reason: "ports missing", gpus: 8, nics: 4,
			check: func(t *testing.T, m *topology.Machine) {
				n, _ := m.NICByName("mlx5_0")
				if ok, why := m.Usable(n, topology.Request{}); ok || why != "port state unknown" {
					t.Errorf("Usable = %v %q, want false \"port state unknown\"", ok, why)
				}
			},
		},
		{
			name: "port state missing",
			damage: func(t *testing.T, root string) {
				mustRemove(t, hostPath(t, root, "/sys/class/infiniband/mlx5_2/ports/1/state"))
			},
			device: "mlx5_2", reason: "state missing", gpus: 8, nics: 4,
		},
		{
			name: "uverbs dev and uevent missing",
			damage: func(t *testing.T, root string) {
				dir := hostPath(t, root, "/sys/class/infiniband_verbs/uverbs3")
				mustRemove(t, filepath.Join(dir, "dev"))
				mustRemove(t, filepath.Join(dir, "uevent"))
			},
			device: "uverbs3", reason: "no dev and no uevent", gpus: 8, nics: 4,
			check: func(t *testing.T, m *topology.Machine) {
				if !hasProblem(m, "mlx5_3", "no uverbs device") {
					t.Errorf("mlx5_3 without uverbs not reported: %v", m.Problems)
				}
			},
		},
		{
			name: "uverbs dev garbage",
			damage: func(t *testing.T, root string) {
				mustWrite(t, hostPath(t, root, "/sys/class/infiniband_verbs/uverbs2/dev"), "231-194\n")
			},
			device: "uverbs2", reason: "want MAJOR:MINOR", gpus: 8, nics: 4,
		},
		{
			name: "umad port garbage",
			damage: func(t *testing.T, root string) {
				mustWrite(t, hostPath(t, root, "/sys/class/infiniband_mad/umad1/port"), "x\n")
			},
			device: "umad1", reason: "want a port number", gpus: 8, nics: 4,
		},
		{
			name:   "rdma_cm missing",
			damage: func(t *testing.T, root string) { mustRemove(t, filepath.Join(root, "sys/class/misc/rdma_cm")) },
			device: "rdma_cm", reason: "rdma_ucm", gpus: 8, nics: 4,
			check: func(t *testing.T, m *topology.Machine) {
				if m.RdmaCM != nil {
					t.Errorf("RdmaCM = %+v, want nil", m.RdmaCM)
				}
			},
		},
		{
			name: "rdma_cm dangling",
			damage: func(t *testing.T, root string) {
				mustRemove(t, filepath.Join(root, "sys/devices/virtual/misc/rdma_cm"))
			},
			device: "rdma_cm", reason: "dangling link", gpus: 8, nics: 4,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root, _ := writeMachine(t, "h100x8-cx7x4", fakesys.Options{})
			tc.damage(t, root)
			m := discover(t, root)
			if len(m.GPUs) != tc.gpus || len(m.NICs) != tc.nics {
				t.Errorf("found %d GPUs and %d NICs, want %d and %d", len(m.GPUs), len(m.NICs), tc.gpus, tc.nics)
			}
			if !hasProblem(m, tc.device, tc.reason) {
				t.Errorf("no problem %s: ...%s...; got %v", tc.device, tc.reason, m.Problems)
			}
			if tc.check != nil {
				tc.check(t, m)
			}
			// Everything built on a damaged machine still works.
			_ = m.Report()
			_, _ = m.Select(topology.Request{GPUs: []int{0, 7}})
		})
	}
}

// TestMissingSubsystems: a node without the nvidia driver or without RDMA
// is not broken; a root without sys is.
func TestMissingSubsystems(t *testing.T) {
	t.Run("no nvidia driver", func(t *testing.T) {
		root, _ := writeMachine(t, "lab-1x1", fakesys.Options{})
		mustRemove(t, filepath.Join(root, "sys/bus/pci/drivers/nvidia"))
		m := discover(t, root)
		if len(m.GPUs) != 0 || len(m.NICs) != 1 || len(m.Problems) != 0 {
			t.Errorf("GPUs %v NICs %d problems %v, want none, 1, none", m.GPUs, len(m.NICs), m.Problems)
		}
	})
	t.Run("no rdma", func(t *testing.T) {
		root, _ := writeMachine(t, "lab-1x1", fakesys.Options{})
		for _, dir := range []string{"infiniband", "infiniband_verbs", "infiniband_mad", "misc"} {
			mustRemove(t, filepath.Join(root, "sys/class", dir))
		}
		m := discover(t, root)
		if len(m.GPUs) != 1 || len(m.NICs) != 0 || len(m.Problems) != 0 {
			t.Errorf("GPUs %d NICs %v problems %v, want 1, none, none", len(m.GPUs), m.NICs, m.Problems)
		}
		if _, err := m.Select(topology.Request{GPUs: []int{0}}); err == nil ||
			err.Error() != "gpu 0: no usable NIC: no RDMA devices found" {
			t.Errorf("Select error = %v", err)
		}
	})
	for _, tc := range []struct{ name, root, want string }{
		{"root without sys", t.TempDir(), "no sys directory"},
		{"root missing", filepath.Join(t.TempDir(), "nope"), "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := topology.Discover(tc.root)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "--root") {
				t.Errorf("Discover(%s) error = %v, want %q and a hint about --root", tc.root, err, tc.want)
			}
		})
	}
}
