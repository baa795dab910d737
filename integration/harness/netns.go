package harness

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"github.com/containernetworking/plugins/pkg/ns"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/railcni/rail/pkg/netnstest"
)

// NetNS is a named network namespace the harness created.
type NetNS struct {
	Name string
	Path string
}

// CreateNetNS creates a named network namespace with its loopback up, in
// /run/netns as `ip netns add` does (so `ip netns exec NAME ...` works on it
// while a demo is kept), once that directory is the shared mount iproute2
// and containerd make it: another program's `ip netns add` can then never
// strand it. The name must not exist yet.
func CreateNetNS(name string) (*NetNS, error) {
	if err := netnstest.ShareDir(); err != nil {
		return nil, err
	}
	n := &NetNS{Name: name, Path: filepath.Join(netnstest.Dir, name)}
	done := make(chan error, 1)
	// The thread that unshares is never unlocked: it ends with the
	// goroutine, so no other goroutine can run in the new namespace.
	go func() {
		runtime.LockOSThread()
		done <- bindNewNetns(n.Path)
	}()
	if err := <-done; err != nil {
		return nil, fmt.Errorf("create netns %s: %w", name, err)
	}
	if err := n.setLoopbackUp(); err != nil {
		return nil, errors.Join(err, n.Delete())
	}
	return n, nil
}

// bindNewNetns moves the calling (locked) thread into a new network
// namespace and bind-mounts it at path.
func bindNewNetns(path string) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_RDONLY, 0o444)
	if err != nil {
		return fmt.Errorf("create mount point: %w", err)
	}
	_ = f.Close()
	if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
		_ = os.Remove(path)
		return fmt.Errorf("unshare: %w", err)
	}
	self := fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid())
	if err := unix.Mount(self, path, "none", unix.MS_BIND, ""); err != nil {
		_ = os.Remove(path)
		return fmt.Errorf("bind mount: %w", err)
	}
	return nil
}

func (n *NetNS) setLoopbackUp() error {
	h, err := n.Netlink()
	if err != nil {
		return err
	}
	defer h.Close()
	lo, err := h.LinkByName("lo")
	if err != nil {
		return fmt.Errorf("netns %s: find lo: %w", n.Name, err)
	}
	if err := h.LinkSetUp(lo); err != nil {
		return fmt.Errorf("netns %s: set lo up: %w", n.Name, err)
	}
	return nil
}

// Exists reports whether the namespace is still mounted at its path.
func (n *NetNS) Exists() bool {
	return ns.IsNSorErr(n.Path) == nil
}

// Delete unmounts and removes the namespace; the kernel destroys it once
// nothing else holds it. Deleting a namespace that is gone is not an error.
func (n *NetNS) Delete() error {
	err := unix.Unmount(n.Path, unix.MNT_DETACH)
	if err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("unmount netns %s: %w", n.Name, err)
	}
	if err := os.Remove(n.Path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove netns %s: %w", n.Name, err)
	}
	return nil
}

// Netlink opens a netlink handle inside the namespace; close it after use.
func (n *NetNS) Netlink() (*netlink.Handle, error) {
	h, err := netns.GetFromPath(n.Path)
	if err != nil {
		return nil, fmt.Errorf("open netns %s: %w", n.Name, err)
	}
	defer h.Close()
	nl, err := netlink.NewHandleAt(h)
	if err != nil {
		return nil, fmt.Errorf("netlink in netns %s: %w", n.Name, err)
	}
	return nl, nil
}

// Do runs fn on an OS thread inside the namespace. Processes started from
// fn (os/exec) are born in the namespace.
func (n *NetNS) Do(fn func() error) error {
	target, err := ns.GetNS(n.Path)
	if err != nil {
		return fmt.Errorf("open netns %s: %w", n.Name, err)
	}
	defer target.Close()
	return target.Do(func(ns.NetNS) error { return fn() })
}

// SetSysctl writes a sysctl of this namespace (key like
// "net/ipv6/conf/default/accept_dad").
func (n *NetNS) SetSysctl(key, value string) error {
	return n.Do(func() error {
		if err := os.WriteFile(filepath.Join("/proc/sys", key), []byte(value), 0o644); err != nil {
			return fmt.Errorf("netns %s: sysctl %s=%s: %w", n.Name, key, value, err)
		}
		return nil
	})
}

// enter moves the calling thread into the namespace: child.Start runs it
// on the thread that forks a daemon, which is never reused.
func (n *NetNS) enter() error {
	target, err := n.Handle()
	if err != nil {
		return err
	}
	defer target.Close()
	if err := netns.Set(target); err != nil {
		return fmt.Errorf("enter netns %s: %w", n.Name, err)
	}
	return nil
}

// Handle opens the namespace as a vishvananda handle; close it after use.
func (n *NetNS) Handle() (netns.NsHandle, error) {
	h, err := netns.GetFromPath(n.Path)
	if err != nil {
		return netns.None(), fmt.Errorf("open netns %s: %w", n.Name, err)
	}
	return h, nil
}
