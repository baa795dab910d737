// Package netnstest prepares /run/netns for tests that create named network
// namespaces, the way iproute2 (`ip netns add`) and containerd prepare it: a
// mount of its own (the directory bind-mounted onto itself) with shared
// propagation.
//
// A namespace bind-mounted into a plain /run/netns is stranded when another
// program then turns the directory into that mount: its recursive bind
// copies the namespace's mount on top, unmounting the name removes only the
// copy, and removing the file fails with EBUSY. Once /run/netns is already
// a shared mount, `ip netns add` only marks it shared again and every
// namespace mounted in it is one mount everybody sees.
package netnstest

import (
	"errors"
	"fmt"
	"os"

	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// Dir is where named network namespaces live (`ip netns`, containerd).
const Dir = "/run/netns"

// ShareDir makes Dir a shared mount of its own, creating it if needed. It
// is idempotent, and parallel test processes calling it take turns (a lock
// on the directory itself), so it is bound onto itself once.
func ShareDir() error {
	if err := os.MkdirAll(Dir, 0o755); err != nil {
		return fmt.Errorf("netnstest: create %s: %w", Dir, err)
	}
	lock, err := os.Open(Dir)
	if err != nil {
		return fmt.Errorf("netnstest: open %s: %w", Dir, err)
	}
	defer lock.Close()
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX); err != nil {
		return fmt.Errorf("netnstest: lock %s: %w", Dir, err)
	}
	return shareDir(Dir)
}

// shareDir marks dir shared; when dir is not a mount point (EINVAL) it is
// first bound onto itself, recursively so that a namespace already mounted
// there comes along, as iproute2's netns_add does.
func shareDir(dir string) error {
	err := unix.Mount("", dir, "none", unix.MS_SHARED|unix.MS_REC, "")
	if err == nil {
		return nil
	}
	if !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("netnstest: make %s shared: %w", dir, err)
	}
	if err := unix.Mount(dir, dir, "none", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("netnstest: bind %s onto itself: %w", dir, err)
	}
	if err := unix.Mount("", dir, "none", unix.MS_SHARED|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("netnstest: make %s shared: %w", dir, err)
	}
	return nil
}

// NewNamed is netns.NewNamed on a shared Dir: it moves the calling thread
// (lock it first) into a new network namespace and mounts it at Dir/name.
// netns.DeleteNamed removes it.
func NewNamed(name string) (netns.NsHandle, error) {
	if err := ShareDir(); err != nil {
		return netns.None(), err
	}
	return netns.NewNamed(name)
}
