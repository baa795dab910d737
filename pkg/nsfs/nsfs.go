// Package nsfs checks and opens network namespace files (a runtime's bind
// mount under /var/run/netns, /proc/<pid>/ns/net) given as input: a path
// that names anything else — a FIFO, a socket, a regular file, a folder —
// is refused without waiting (a FIFO's open waits for a writer forever).
package nsfs

import (
	"errors"
	"fmt"
	"os"

	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// ErrNotNetns is wrapped by the errors for a path that exists and is not
// a namespace file.
var ErrNotNetns = errors.New("not a network namespace")

// Check says, by statfs and without opening it, whether path is a
// namespace file: nil when it is, an error wrapping os.ErrNotExist when
// nothing is there, one wrapping ErrNotNetns when something else is.
func Check(path string) error {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return &os.PathError{Op: "statfs", Path: path, Err: err}
	}
	return magic(path, st)
}

// Open opens a namespace file: non-blocking, and checked again on the
// open descriptor (the path could change between a check and an open).
func Open(path string) (netns.NsHandle, error) {
	if err := Check(path); err != nil {
		return netns.None(), err
	}
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return netns.None(), &os.PathError{Op: "open", Path: path, Err: err}
	}
	var st unix.Statfs_t
	if err := unix.Fstatfs(fd, &st); err != nil {
		_ = unix.Close(fd)
		return netns.None(), &os.PathError{Op: "fstatfs", Path: path, Err: err}
	}
	if err := magic(path, st); err != nil {
		_ = unix.Close(fd)
		return netns.None(), err
	}
	return netns.NsHandle(fd), nil
}

func magic(path string, st unix.Statfs_t) error {
	if st.Type != unix.NSFS_MAGIC {
		return fmt.Errorf("%s: %w (its filesystem is %#x, not nsfs): give the pod's netns (/var/run/netns/<name> or /proc/<pid>/ns/net)",
			path, ErrNotNetns, st.Type)
	}
	return nil
}
