//go:build linux

package topology_test

import (
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/railcni/rail/pkg/topology"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

// hangGuard bounds how long a test waits for Discover before it calls it
// hung; a discovery of a fake machine takes milliseconds.
const hangGuard = time.Minute

// specialKind replaces a file with something that is not a regular file.
type specialKind struct {
	name   string
	make   func(t *testing.T, path string)
	reason string
}

// specialKinds are the kinds tested. A FIFO without a writer used to block
// discovery forever in open(2).
func specialKinds() []specialKind {
	return []specialKind{
		{name: "fifo", reason: "is a FIFO", make: func(t *testing.T, path string) {
			if err := syscall.Mkfifo(path, 0o644); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { unblockFIFO(path) })
		}},
		{name: "socket", reason: "is a socket", make: func(t *testing.T, path string) {
			if err := syscall.Mknod(path, syscall.S_IFSOCK|0o644, 0); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "device node", reason: "is a device node", make: func(t *testing.T, path string) {
			if err := os.Symlink("/dev/null", path); err != nil { // a character device without needing CAP_MKNOD
				t.Fatal(err)
			}
		}},
		{name: "directory", reason: "is a directory", make: func(t *testing.T, path string) {
			if err := os.Mkdir(path, 0o755); err != nil {
				t.Fatal(err)
			}
		}},
	}
}

// unblockFIFO opens the FIFO for writing once, so a reader stuck in open
// (the defect this guards against) returns and the test binary can end.
func unblockFIFO(path string) {
	if fd, err := syscall.Open(path, syscall.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
		syscall.Close(fd)
	}
}

// TestSpecialFilesNeverBlock puts a FIFO, a socket, a device node or a
// directory where discovery expects a sysfs or procfs file: discovery
// must not block, must report that file as a problem of its device, and
// must still describe every device.
func TestSpecialFilesNeverBlock(t *testing.T) {
	const gpu0 = "0000:18:00.0"
	files := []struct {
		name   string
		path   func(t *testing.T, root string) string
		device string
	}{
		{name: "gpu numa_node", device: "gpu " + gpu0, path: func(t *testing.T, root string) string {
			return hostPath(t, root, "/sys/bus/pci/devices/"+gpu0) + "/numa_node"
		}},
		{name: "gpu information", device: "gpu " + gpu0, path: func(t *testing.T, root string) string {
			return filepath.Join(root, "proc/driver/nvidia/gpus", gpu0, "information")
		}},
		{name: "port state", device: "mlx5_2", path: func(t *testing.T, root string) string {
			return hostPath(t, root, "/sys/class/infiniband/mlx5_2/ports/1") + "/state"
		}},
		{name: "uverbs ibdev", device: "uverbs2", path: func(t *testing.T, root string) string {
			return hostPath(t, root, "/sys/class/infiniband_verbs/uverbs2") + "/ibdev"
		}},
	}
	root, _ := writeMachine(t, "h100x8-cx7x4", fakesys.Options{})
	for _, f := range files {
		path := f.path(t, root)
		original, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, kind := range specialKinds() {
			t.Run(f.name+" is a "+kind.name, func(t *testing.T) {
				mustRemove(t, path)
				kind.make(t, path)
				defer func() { // the next case starts from the intact machine
					mustRemove(t, path)
					mustWrite(t, path, string(original))
				}()
				m := discoverWithin(t, root)
				if len(m.GPUs) != 8 || len(m.NICs) != 4 {
					t.Errorf("found %d GPUs, %d NICs; want 8 and 4 despite one odd file", len(m.GPUs), len(m.NICs))
				}
				if !hasProblem(m, f.device, kind.reason) {
					t.Errorf("problems = %+v, want one for %s saying %q", m.Problems, f.device, kind.reason)
				}
			})
		}
	}
}

// discoverWithin runs Discover and fails the test if it does not return.
func discoverWithin(t *testing.T, root string) *topology.Machine {
	t.Helper()
	type result struct {
		m   *topology.Machine
		err error
	}
	done := make(chan result, 1)
	go func() {
		m, err := topology.Discover(root)
		done <- result{m, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			t.Fatal(r.err)
		}
		return r.m
	case <-time.After(hangGuard):
		stacks := make([]byte, 1<<20)
		stacks = stacks[:runtime.Stack(stacks, true)]
		t.Fatalf("Discover(%s) still running after %s:\n%s", root, hangGuard, stacks)
		return nil
	}
}
