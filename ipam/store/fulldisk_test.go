package store

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

const (
	fullDiskChildEnv = "RAIL_STORE_FULL_DISK_DIR"
	parentMountNSEnv = "RAIL_STORE_PARENT_MOUNT_NS" // the test's mount namespace, for its child
)

// TestFullDiskIsUnhealthy fills the file system under an open store (a
// 1 MiB tmpfs, in a mount namespace of a child process) until a write
// fails: Health must stay unhealthy while the disk is full — a commit
// without changes still fits in the file, so it proves nothing — and be
// healthy again, with writes succeeding, once space is freed.
func TestFullDiskIsUnhealthy(t *testing.T) {
	if dir := os.Getenv(fullDiskChildEnv); dir != "" {
		if err := fullDiskChild(dir); err != nil {
			fmt.Fprintln(os.Stderr, "FAIL:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	unshare, err := exec.LookPath("unshare")
	if os.Geteuid() != 0 || err != nil {
		t.Skip("needs root and unshare(1) to mount a small tmpfs")
	}
	dir := t.TempDir()
	mnt, err := os.Readlink("/proc/self/ns/mnt")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(unshare, "-m", "--propagation", "private", os.Args[0], "-test.run=^TestFullDiskIsUnhealthy$")
	cmd.Env = append(os.Environ(), fullDiskChildEnv+"="+dir, parentMountNSEnv+"="+mnt)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
}

func fullDiskChild(dir string) error {
	if err := dropNetnsMounts(); err != nil {
		return err
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=1m"); err != nil {
		return fmt.Errorf("mount tmpfs: %w", err)
	}
	defer syscall.Unmount(dir, syscall.MNT_DETACH)
	st, _, err := Open(filepath.Join(dir, "leases.db"), Options{})
	if err != nil {
		return err
	}
	defer st.Close()
	filler := filepath.Join(dir, "filler")
	if err := fill(filler); err != nil {
		return err
	}
	addr := netip.MustParseAddr("10.0.0.0")
	write := func() error {
		addr = addr.Next()
		l := testLease("sb-"+addr.String(), netip.PrefixFrom(addr, 8), time.Now())
		l.Netns = strings.Repeat("n", 1500) // pages fill up sooner
		ses := st.Begin()
		if err := ses.PutLease(l); err != nil {
			return err
		}
		return ses.Commit()
	}
	var werr error
	for range 2000 {
		if werr = write(); werr != nil {
			break
		}
	}
	if !errors.Is(werr, syscall.ENOSPC) {
		return fmt.Errorf("writes on a full disk: %v, want ENOSPC", werr)
	}
	for i := range 3 {
		if h := st.Health(); h == nil {
			return fmt.Errorf("Health #%d on a full disk, after a write failed with ENOSPC: nil, want unhealthy", i)
		}
	}
	if err := os.Remove(filler); err != nil {
		return err
	}
	if h := st.Health(); h != nil {
		return fmt.Errorf("Health once space is freed: %v, want nil", h)
	}
	if err := write(); err != nil {
		return fmt.Errorf("write once space is freed: %w", err)
	}
	return nil
}

// fill writes path until the file system is full.
func fill(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	chunk := make([]byte, 4096)
	for {
		if _, err := f.Write(chunk); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				return nil
			}
			return err
		}
	}
}

// dropNetnsMounts takes the named netns mounts this child's private copy
// of the host's mounts holds off /run/netns, in this mount namespace only:
// each copy would keep a neighbour test's netns alive after it deleted
// it (a pod netns whose NIC must come back when it dies) for as long as
// this child runs.
func dropNetnsMounts() error {
	self, err := os.Readlink("/proc/self/ns/mnt")
	if err != nil {
		return err
	}
	if parent := os.Getenv(parentMountNSEnv); parent == "" || parent == self {
		return fmt.Errorf("the child shares its parent's mount namespace %s (or does not know it): not unmounting /run/netns", self)
	}
	for {
		err := syscall.Unmount("/run/netns", syscall.MNT_DETACH)
		switch {
		case errors.Is(err, syscall.EINVAL), errors.Is(err, syscall.ENOENT):
			return nil
		case err != nil:
			return fmt.Errorf("unmount /run/netns: %w", err)
		}
	}
}
