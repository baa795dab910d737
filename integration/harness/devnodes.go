package harness

import (
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/railcni/rail/pkg/topology/fakesys"
)

// HarmlessDevNumbers gives the leasable RDMA nodes of a 4-NIC machine the
// numbers of harmless memory devices (/dev/null, /dev/zero, /dev/full,
// /dev/urandom; /dev/random for rdma_cm), for fakesys.Options.DevNumbers:
// opening them in a container proves the device cgroup lets them through.
func HarmlessDevNumbers() map[string][2]uint32 {
	return map[string][2]uint32{
		"uverbs0": {1, 3}, "uverbs1": {1, 5}, "uverbs2": {1, 7}, "uverbs3": {1, 9}, "rdma_cm": {1, 8},
	}
}

// MakeDevNodes creates <root>/dev/infiniband/<name> for every RDMA char
// device the written machine declares, with the declared numbers, so the
// machine's device nodes can be opened and injected like real ones.
func MakeDevNodes(spec *fakesys.Spec) error {
	dir := filepath.Join(spec.Root, "dev/infiniband")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	devs := []fakesys.DevSpec{spec.RdmaCM}
	for _, nic := range spec.NICs {
		devs = append(devs, nic.Uverbs, nic.Umad)
		if nic.Issm != nil {
			devs = append(devs, *nic.Issm)
		}
	}
	for _, d := range devs {
		if d.Name == "" {
			continue
		}
		path := filepath.Join(dir, d.Name)
		if err := unix.Mknod(path, unix.S_IFCHR|0o666, int(unix.Mkdev(d.Major, d.Minor))); err != nil {
			return fmt.Errorf("mknod %s %d:%d: %w", path, d.Major, d.Minor, err)
		}
	}
	return nil
}
