package fakesys

import (
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func write(t *testing.T, machine string, opt Options) (string, *Spec) {
	t.Helper()
	root := filepath.Join(t.TempDir(), "root")
	spec, err := Write(root, machine, opt)
	if err != nil {
		t.Fatalf("Write(%s): %v", machine, err)
	}
	return root, spec
}

// TestLinksAreRelativeAndResolve walks every machine: each symlink is
// relative, as in sysfs, and leads to something inside the root.
func TestLinksAreRelativeAndResolve(t *testing.T) {
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			root, _ := write(t, name, Options{})
			realRoot, err := filepath.EvalSymlinks(root)
			if err != nil {
				t.Fatal(err)
			}
			links := 0
			err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
				if err != nil || d.Type()&fs.ModeSymlink == 0 {
					return err
				}
				links++
				target, err := os.Readlink(p)
				if err != nil {
					return err
				}
				if filepath.IsAbs(target) {
					t.Errorf("%s -> %s is absolute", p, target)
				}
				resolved, err := filepath.EvalSymlinks(p)
				if err != nil {
					t.Errorf("%s -> %s does not resolve: %v", p, target, err)
				} else if !strings.HasPrefix(resolved, realRoot+"/") {
					t.Errorf("%s -> %s leaves the root", p, resolved)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if links < 10 {
				t.Errorf("only %d links written", links)
			}
		})
	}
}

func readText(t *testing.T, root, p string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, p))
	if err != nil {
		t.Fatalf("read %s: %v", p, err)
	}
	return string(b)
}

func resolve(t *testing.T, root, p string) string {
	t.Helper()
	realRoot, _ := filepath.EvalSymlinks(root)
	r, err := filepath.EvalSymlinks(filepath.Join(root, p))
	if err != nil {
		t.Fatalf("resolve %s: %v", p, err)
	}
	return strings.TrimPrefix(r, realRoot)
}

func TestLayout(t *testing.T) {
	root, spec := write(t, "h100x8-cx7x4", Options{})
	const gpuDir = "/sys/devices/pci0000:15/0000:15:01.0/0000:16:00.0/0000:17:00.0/0000:18:00.0"
	const nicDir = "/sys/devices/pci0000:15/0000:15:01.0/0000:16:00.0/0000:17:01.0/0000:19:00.0"
	for p, want := range map[string]string{
		"/sys/bus/pci/drivers/nvidia/0000:18:00.0":    gpuDir,
		"/sys/bus/pci/devices/0000:18:00.0":           gpuDir,
		gpuDir + "/driver":                            "/sys/bus/pci/drivers/nvidia",
		"/sys/bus/pci/drivers/mlx5_core/0000:19:00.0": nicDir,
		"/sys/class/infiniband/mlx5_0":                nicDir + "/infiniband/mlx5_0",
		"/sys/class/infiniband/mlx5_0/device":         nicDir,
		"/sys/class/net/ibp25s0":                      nicDir + "/net/ibp25s0",
		"/sys/class/net/ibp25s0/device":               nicDir,
		"/sys/class/infiniband_verbs/uverbs0":         nicDir + "/infiniband_verbs/uverbs0",
		"/sys/class/infiniband_mad/umad0":             nicDir + "/infiniband_mad/umad0",
		"/sys/class/infiniband_mad/issm0":             nicDir + "/infiniband_mad/issm0",
		"/sys/class/misc/rdma_cm":                     "/sys/devices/virtual/misc/rdma_cm",
	} {
		if got := resolve(t, root, p); got != want {
			t.Errorf("%s -> %s, want %s", p, got, want)
		}
	}
	for p, want := range map[string]string{
		gpuDir + "/numa_node": "0\n",
		gpuDir + "/class":     "0x030200\n",
		"/sys/devices/pci0000:97/0000:97:01.0/numa_node":  "1\n",
		"/sys/class/infiniband/mlx5_0/ports/1/state":      "4: ACTIVE\n",
		"/sys/class/infiniband/mlx5_0/ports/1/phys_state": "5: LinkUp\n",
		"/sys/class/infiniband/mlx5_0/ports/1/link_layer": "InfiniBand\n",
		"/sys/class/infiniband_verbs/uverbs0/dev":         "231:192\n",
		"/sys/class/infiniband_verbs/uverbs0/ibdev":       "mlx5_0\n",
		"/sys/class/infiniband_mad/umad1/dev":             "231:1\n",
		"/sys/class/infiniband_mad/issm1/dev":             "231:65\n",
		"/sys/class/infiniband_mad/issm1/port":            "1\n",
		"/sys/class/misc/rdma_cm/dev":                     "10:58\n",
		"/sys/class/infiniband_verbs/abi_version":         "6\n",
	} {
		if got := readText(t, root, p); got != want {
			t.Errorf("%s = %q, want %q", p, got, want)
		}
	}
	info := readText(t, root, "/proc/driver/nvidia/gpus/0000:18:00.0/information")
	for _, want := range []string{"Model: \t\t NVIDIA H100 80GB HBM3\n", "GPU UUID: \t " + spec.GPUs[0].UUID + "\n", "Device Minor: \t 0\n", "Bus Location: \t 0000:18:00.0\n"} {
		if !strings.Contains(info, want) {
			t.Errorf("information lacks %q:\n%s", want, info)
		}
	}
	if !strings.HasPrefix(spec.GPUs[0].UUID, "GPU-") || len(spec.GPUs[0].UUID) != 40 {
		t.Errorf("UUID %q is not GPU-8-4-4-4-12", spec.GPUs[0].UUID)
	}
	if _, err := os.Stat(filepath.Join(root, "sys/class/infiniband/mlx5_0/ports/1/gid_attrs/ndevs/0")); err == nil {
		t.Error("InfiniBand port has a readable GID netdev; the kernel refuses that read")
	}
}

func TestBondAndSoftRoCELayout(t *testing.T) {
	root, spec := write(t, "down-bond", Options{})
	bond, ok := spec.NIC("mlx5_bond_0")
	if !ok || bond.Netdev != "bond0" || strings.Join(bond.Slaves, " ") != "ens3f0np0 ens3f1np1" || bond.Issm != nil {
		t.Fatalf("bond spec = %+v", bond)
	}
	if got := readText(t, root, "/sys/class/net/bond0/bonding/slaves"); got != "ens3f0np0 ens3f1np1\n" {
		t.Errorf("slaves = %q", got)
	}
	if got := resolve(t, root, "/sys/class/net/ens3f1np1/master"); got != "/sys/devices/virtual/net/bond0" {
		t.Errorf("slave master -> %s", got)
	}
	if got := readText(t, root, "/sys/class/infiniband/mlx5_bond_0/ports/1/gid_attrs/ndevs/0"); got != "bond0\n" {
		t.Errorf("bond GID 0 netdev = %q", got)
	}
	if _, ok := spec.NIC("mlx5_2"); ok {
		t.Error("a bonded card must not keep per-function RDMA devices")
	}

	root, spec = write(t, "softroce", Options{Netdevs: map[string]string{"rxe0": "veth-test1"}})
	if got := resolve(t, root, "/sys/class/infiniband/rxe0"); got != "/sys/devices/virtual/infiniband/rxe0" {
		t.Errorf("rxe0 -> %s", got)
	}
	if got := resolve(t, root, "/sys/class/net/veth-test1"); got != "/sys/devices/virtual/net/veth-test1" {
		t.Errorf("netdev -> %s", got)
	}
	if got := readText(t, root, "/sys/class/infiniband/rxe0/parent"); got != "veth-test1\n" {
		t.Errorf("parent = %q", got)
	}
	if n, _ := spec.NIC("rxe0"); !n.Virtual || n.PCI != "" || n.Netdev != "veth-test1" {
		t.Errorf("rxe0 spec = %+v", n)
	}
}

func TestDeterministic(t *testing.T) {
	_, a := write(t, "gpu8-nic8", Options{})
	_, b := write(t, "gpu8-nic8", Options{})
	a.Root, b.Root = "", ""
	if !reflect.DeepEqual(a, b) {
		t.Error("two writes of one machine differ")
	}
	_, c := write(t, "h100x8-cx7x4", Options{})
	if c.GPUs[0].UUID == a.GPUs[0].UUID {
		t.Error("two machines share a GPU UUID")
	}
}

func TestWriteErrors(t *testing.T) {
	full := t.TempDir()
	if err := os.WriteFile(filepath.Join(full, "x"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	gpu := Slot{GPU: &GPU{}}
	tests := []struct {
		name, root, machine string
		host                *Host
		want                string
	}{
		{"unknown machine", "", "dgx-z", nil, `machine "dgx-z": unknown`},
		{"not empty", full, "lab-1x1", nil, "is not empty"},
		{"empty root", "-", "lab-1x1", nil, "fake root is empty"},
		{"empty slot", "", "", &Host{Roots: []Root{{Bus: 1, Ports: []Slot{{}}}}}, "root 0 port 0: a slot holds exactly one"},
		{"two kinds", "", "", &Host{Roots: []Root{{Bus: 1, Ports: []Slot{{GPU: &GPU{}, Card: &Card{}}}}}}, "has 2"},
		{"bad link layer", "", "", &Host{Roots: []Root{{Bus: 1, Ports: []Slot{{Card: &Card{Funcs: []Func{{RDMA: "m", LinkLayer: "ib"}}}}}}}}, `LinkLayer "ib"`},
		{"no RDMA name", "", "", &Host{Roots: []Root{{Bus: 1, Ports: []Slot{{Card: &Card{Funcs: []Func{{LinkLayer: "Ethernet"}}}}}}}}, "RDMA name is empty"},
		{"InfiniBand bond", "", "", &Host{Roots: []Root{{Bus: 1, Ports: []Slot{{Card: &Card{Bond: "b", Funcs: []Func{{LinkLayer: "InfiniBand"}, {LinkLayer: "InfiniBand"}}}}}}}}, "needs Ethernet"},
		{"overlapping roots", "", "", &Host{Roots: []Root{{Bus: 1, Ports: []Slot{gpu, gpu}}, {Bus: 2, Ports: []Slot{gpu}}}}, "overlaps"},
		{"bus overflow", "", "", &Host{Roots: []Root{{Bus: 0xfe, Ports: []Slot{gpu, gpu}}}}, "ran out of bus numbers"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := tc.root
			switch root {
			case "":
				root = filepath.Join(t.TempDir(), "root")
			case "-":
				root = ""
			}
			var err error
			if tc.host != nil {
				_, err = WriteHost(root, "bad", *tc.host, Options{})
			} else {
				_, err = Write(root, tc.machine, Options{})
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestGPUUUIDsOption(t *testing.T) {
	set := []string{"GPU-00000000-0000-0000-0000-000000000000", "", "GPU-00000000-0000-0000-0000-000000000002"}
	derived, err := Write(t.TempDir(), "h100x8-cx7x4", Options{})
	if err != nil {
		t.Fatal(err)
	}
	spec, err := Write(t.TempDir(), "h100x8-cx7x4", Options{GPUUUIDs: set})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		gpu  int
		want string
	}{
		{0, set[0]},
		{1, derived.GPUs[1].UUID}, // "" keeps the derived UUID
		{2, set[2]},
		{3, derived.GPUs[3].UUID}, // beyond the list
	}
	for _, tc := range tests {
		g := spec.GPUs[tc.gpu]
		if g.UUID != tc.want {
			t.Errorf("GPU %d: spec UUID %q, want %q", tc.gpu, g.UUID, tc.want)
		}
		info, err := os.ReadFile(filepath.Join(spec.Root, "proc/driver/nvidia/gpus", g.PCI, "information"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(info), "GPU UUID: \t "+tc.want+"\n") {
			t.Errorf("GPU %d: information file does not carry %s:\n%s", tc.gpu, tc.want, info)
		}
	}
}

// TestLinksReadAsTheKernelWritesThem: a link to the directory it sits in
// or above reads as the kernel writes it (climbing to the target's parent,
// then naming it), other links by the shortest way; softroce-vm's
// virtio-net and e1000e netdevs sit as the kernel puts them.
func TestLinksReadAsTheKernelWritesThem(t *testing.T) {
	root, _ := write(t, "softroce-vm", Options{})
	tests := []struct{ link, want, resolved string }{
		{"/sys/class/net/eth1/device", "../../../virtio0", "/sys/devices/pci0000:00/0000:00:03.0/0000:03:00.0/0000:04:00.0/0000:05:00.0/virtio0"},
		{"/sys/class/net/eth0/device", "../../../0000:01:00.0", "/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0"},
		{"/sys/class/net/eth1", "../../devices/pci0000:00/0000:00:03.0/0000:03:00.0/0000:04:00.0/0000:05:00.0/virtio0/net/eth1", ""},
		{"/sys/bus/virtio/devices/virtio0/driver", "../../../../../../../bus/virtio/drivers/virtio_net", "/sys/bus/virtio/drivers/virtio_net"},
	}
	for _, tt := range tests {
		dir := tt.link
		if strings.HasSuffix(dir, "/device") || strings.HasSuffix(dir, "/driver") {
			// read the link inside the device's own directory
			real, err := filepath.EvalSymlinks(filepath.Join(root, filepath.Dir(dir)))
			if err != nil {
				t.Fatal(err)
			}
			dir = filepath.Join(real, filepath.Base(dir))
		} else {
			dir = filepath.Join(root, dir)
		}
		got, err := os.Readlink(dir)
		if err != nil || got != tt.want {
			t.Errorf("%s -> %q (%v), want %q", tt.link, got, err, tt.want)
		}
		if tt.resolved != "" {
			if r := resolve(t, root, tt.link); r != tt.resolved {
				t.Errorf("%s resolves to %s, want %s", tt.link, r, tt.resolved)
			}
		}
	}
}
