package rdma

import (
	"errors"
	"fmt"
	"runtime"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/railcni/rail/pkg/nsfs"
)

// MoveDevice moves the RDMA device rdmaDev (e.g. "mlx5_0") from the network
// namespace fromNetns to toNetns, like "rdma dev set <dev> netns <ns>".
// Both are netns paths (/proc/<pid>/ns/net, /var/run/netns/<name>); an empty
// path means the caller's own network namespace (the calling thread's).
//
// The request is sent on a NETLINK_RDMA socket opened inside fromNetns,
// because in exclusive mode the device is only visible there. The kernel
// accepts it only in exclusive netns mode; in shared mode it refuses.
func MoveDevice(rdmaDev, fromNetns, toNetns string) error {
	if rdmaDev == "" {
		return errors.New("move rdma device: device name is empty")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()

	from, err := openNetns(fromNetns)
	if err != nil {
		return fmt.Errorf("move rdma device %s: source netns: %w", rdmaDev, err)
	}
	defer closeNetns(from)
	to, err := openNetns(toNetns)
	if err != nil {
		return fmt.Errorf("move rdma device %s: target netns: %w", rdmaDev, err)
	}
	defer closeNetns(to)
	// The kernel moves a device only for a caller whose own netns holds it
	// (rdma_dev_change_netns compares current's netns with the device's):
	// run this thread in the source netns for the request.
	if fromNetns != "" {
		back, err := enterNetns(from)
		if err != nil {
			return fmt.Errorf("move rdma device %s: %w", rdmaDev, err)
		}
		defer back()
	}

	h, err := netlink.NewHandleAt(from, unix.NETLINK_RDMA)
	if err != nil {
		if noRDMASubsystem(err) {
			return fmt.Errorf("move rdma device %s: this kernel has no RDMA subsystem", rdmaDev)
		}
		return fmt.Errorf("move rdma device %s: open rdma netlink socket: %w", rdmaDev, err)
	}
	defer h.Close()
	link, err := findDevice(h, rdmaDev)
	if err != nil {
		return fmt.Errorf("move rdma device %s: %w", rdmaDev, err)
	}
	if err := h.RdmaLinkSetNsFd(link, uint32(to)); err != nil {
		return fmt.Errorf("move rdma device %s to netns %s: %w (the RDMA subsystem must be in exclusive netns mode)",
			rdmaDev, describeNetns(toNetns), err)
	}
	return nil
}

// ErrDeviceNotFound is wrapped by MoveDevice when the device is not in the
// source netns (for example because the kernel already returned it to the
// host when the pod netns was destroyed).
var ErrDeviceNotFound = errors.New("rdma device not found in the source netns")

func findDevice(h *netlink.Handle, name string) (*netlink.RdmaLink, error) {
	links, err := h.RdmaLinkList()
	if err != nil {
		return nil, fmt.Errorf("list rdma devices: %w", err)
	}
	for _, l := range links {
		if l.Attrs.Name == name {
			return l, nil
		}
	}
	return nil, ErrDeviceNotFound
}

// openNetns opens path, or the calling thread's netns when path is empty.
func openNetns(path string) (netns.NsHandle, error) {
	if path == "" {
		return netns.Get()
	}
	h, err := nsfs.Open(path)
	if err != nil {
		return netns.None(), fmt.Errorf("open %s: %w", path, err)
	}
	return h, nil
}

func closeNetns(h netns.NsHandle) {
	if h.IsOpen() {
		_ = h.Close()
	}
}

func describeNetns(path string) string {
	if path == "" {
		return "of the caller"
	}
	return path
}

// enterNetns moves the locked calling thread into h and returns how to
// move it back. A thread that cannot go back stays locked, so the Go
// runtime retires it instead of reusing it in the wrong netns.
func enterNetns(h netns.NsHandle) (func(), error) {
	orig, err := netns.Get()
	if err != nil {
		return nil, fmt.Errorf("open own netns: %w", err)
	}
	if err := netns.Set(h); err != nil {
		_ = orig.Close()
		return nil, fmt.Errorf("enter source netns: %w", err)
	}
	return func() {
		if err := netns.Set(orig); err != nil {
			runtime.LockOSThread()
		}
		_ = orig.Close()
	}, nil
}
