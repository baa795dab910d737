//go:build linux

package topology_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/railcni/rail/pkg/topology"
)

// fuzzGPU and fuzzNIC are where the trees below put their devices.
const (
	fuzzGPU = "sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0"
	fuzzNIC = "sys/devices/pci0000:00/0000:00:01.0/0000:02:00.0"
)

// treeVocabulary is what tree ops pick from: the places discovery looks
// at, file contents it understands (or nearly does), and link targets
// inside the tree, outside the root, dangling or looping.
type treeVocabulary struct {
	paths, contents, targets []string
}

func newTreeVocabulary() treeVocabulary {
	return treeVocabulary{paths: fuzzPaths(), contents: fuzzContents(), targets: fuzzTargets()}
}

func fuzzPaths() []string {
	return []string{
		"sys/bus/pci/drivers/nvidia/0000:01:00.0",
		"sys/bus/pci/drivers/nvidia/0000:02:00.0",
		"sys/bus/pci/devices/0000:01:00.0",
		fuzzGPU + "/class", fuzzGPU + "/numa_node", fuzzGPU + "/vendor",
		fuzzNIC + "/class", fuzzNIC + "/numa_node", fuzzNIC + "/net/eth0", fuzzNIC + "/physfn",
		fuzzNIC + "/infiniband/mlx5_0",
		"sys/class/infiniband/mlx5_0", "sys/class/infiniband/mlx5_0/device", "sys/class/infiniband/mlx5_0/node_guid",
		"sys/class/infiniband/mlx5_0/ports/1/state", "sys/class/infiniband/mlx5_0/ports/1/phys_state",
		"sys/class/infiniband/mlx5_0/ports/1/link_layer", "sys/class/infiniband/mlx5_0/ports/1/rate",
		"sys/class/infiniband/mlx5_0/ports/1/gid_attrs/ndevs/0", "sys/class/infiniband/mlx5_bond_0",
		"sys/class/net/eth0", "sys/class/net/eth0/device", "sys/class/net/eth0/dev_port", "sys/class/net/eth0/bonding",
		"sys/class/infiniband_verbs/uverbs0/ibdev", "sys/class/infiniband_verbs/uverbs0/dev",
		"sys/class/infiniband_verbs/uverbs0/uevent", "sys/class/infiniband_verbs/abi_version",
		"sys/class/infiniband_mad/umad0/ibdev", "sys/class/infiniband_mad/umad0/port", "sys/class/infiniband_mad/umad0/dev",
		"sys/class/infiniband_mad/issm0/dev", "sys/class/misc/rdma_cm", "sys/class/misc/rdma_cm/dev",
		"proc/driver/nvidia/gpus/0000:01:00.0/information",
	}
}

func fuzzContents() []string {
	return []string{
		"", "0\n", "-1\n", "1\n", "99999999999999999999\n", "0x030200\n", "0x020700\n", "0x10de\n",
		"4: ACTIVE\n", "1: DOWN\n", "5: LinkUp\n", "InfiniBand\n", "Ethernet\n", "400 Gb/sec (4X NDR)\n",
		"231:192\n", "231\n", "MAJOR=231\nMINOR=192\nDEVNAME=infiniband/uverbs0\n", "MAJOR=x\n", "mlx5_0\n", "eth0\n",
		"GPU UUID: \t GPU-12345678-1234-1234-1234-123456789abc\nDevice Minor: \t 0\n",
		"Device Minor: 4294967296\n", "0000:00:01.0\n", "\x00\xff\n",
	}
}

func fuzzTargets() []string {
	return []string{
		"/" + fuzzGPU, "/" + fuzzNIC, "/" + fuzzNIC + "/infiniband/mlx5_0", "/" + fuzzNIC + "/net/eth0",
		"/", "/dev/null", "/nonexistent", ".", "..", "../../..", "loop",
	}
}

// buildTree turns ops (3 bytes each: path, kind, argument) into files below
// root. An op that cannot be done is skipped, and so is one whose parent
// directory is reached through a link: links may lead out of the root, and
// the tree is only ever written inside it.
func buildTree(root string, ops []byte, content string) {
	v := newTreeVocabulary()
	for i := 0; i+2 < len(ops) && i < 3*40; i += 3 {
		rel := v.paths[int(ops[i])%len(v.paths)]
		path := filepath.Join(root, rel)
		arg := int(ops[i+2])
		if !makeRealDirs(root, filepath.Dir(rel)) {
			continue
		}
		_ = os.RemoveAll(path) // path itself is removed, never followed
		switch ops[i+1] % 7 {
		case 0:
			_ = os.MkdirAll(path, 0o755)
		case 1:
			_ = os.WriteFile(path, []byte(v.contents[arg%len(v.contents)]), 0o644)
		case 2:
			_ = os.WriteFile(path, []byte(content), 0o644)
		case 3: // absolute targets are made relative to the root, as sysfs links are
			target := v.targets[arg%len(v.targets)]
			if filepath.IsAbs(target) && arg%2 == 0 {
				target, _ = filepath.Rel(filepath.Dir(path), filepath.Join(root, target))
			}
			_ = os.Symlink(target, path)
		case 4:
			_ = syscall.Mkfifo(path, 0o644)
		case 5:
			_ = syscall.Mknod(path, syscall.S_IFSOCK|0o644, 0)
		case 6:
			_ = os.Symlink(path, path) // a loop
		}
	}
}

// makeRealDirs creates each directory of rel below root and reports
// whether all of them are real directories (no links among them).
func makeRealDirs(root, rel string) bool {
	dir := root
	for _, part := range strings.Split(rel, "/") {
		dir = filepath.Join(dir, part)
		if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			return false
		}
		if info, err := os.Lstat(dir); err != nil || !info.IsDir() {
			return false
		}
	}
	return true
}

// FuzzSysfsTree builds small random trees under a temporary root (files,
// directories, links in and out of the root, FIFOs, sockets, loops) and
// runs discovery on them: it must neither panic nor hang, and what it
// found must be reportable and selectable.
func FuzzSysfsTree(f *testing.F) {
	full := []byte{
		0, 3, 0, 2, 3, 0, 3, 1, 5, 4, 1, 1, 6, 1, 6, 7, 1, 0, 8, 0, 0, 10, 0, 0, // GPU + NIC device dirs
		11, 3, 2, 12, 3, 12, 14, 1, 8, 16, 1, 11, 17, 1, 13, 20, 3, 14, 24, 1, 18, 25, 1, 14,
		26, 1, 16, 34, 1, 20,
	}
	f.Add(full, "")
	f.Add(append([]byte{4, 4, 0, 14, 5, 0, 34, 4, 0}, full...), "x")
	f.Add([]byte{11, 6, 0, 20, 3, 4, 0, 3, 7}, "")
	f.Add([]byte{25, 2, 0, 24, 1, 18}, "MAJOR=231\nMINOR=99999999999\n")
	f.Fuzz(func(t *testing.T, ops []byte, content string) {
		root := t.TempDir()
		if err := os.MkdirAll(filepath.Join(root, "sys"), 0o755); err != nil {
			t.Fatal(err)
		}
		buildTree(root, ops, content)
		m := discoverWithin(t, root)
		_ = m.Report()
		gpus := make([]int, len(m.GPUs))
		for i, g := range m.GPUs {
			gpus[i] = g.Index
		}
		_, _ = m.Select(topology.Request{GPUs: gpus})
		_ = m.Affinity()
	})
}
