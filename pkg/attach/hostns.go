package attach

import (
	"errors"
	"fmt"
	"os"
	"runtime"

	"golang.org/x/sys/unix"
)

// ErrHostNetns is the refusal of a pod netns that is the caller's own: an
// attach there would rename and address the host's NIC in the host.
var ErrHostNetns = errors.New("the pod netns is the caller's own (host) network namespace")

// IsOwnNetns reports whether the netns at path is the calling thread's
// own. A path that does not exist is not.
func IsOwnNetns(path string) (bool, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var own, other unix.Stat_t
	if err := unix.Stat(fmt.Sprintf("/proc/%d/task/%d/ns/net", os.Getpid(), unix.Gettid()), &own); err != nil {
		return false, fmt.Errorf("stat own netns: %w", err)
	}
	if err := unix.Stat(path, &other); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return false, nil
		}
		return false, fmt.Errorf("stat netns %s: %w", path, err)
	}
	return own.Dev == other.Dev && own.Ino == other.Ino, nil
}

// sameNetns reports whether two open netns handles are one namespace.
func sameNetns(a, b int) (bool, error) {
	var sa, sb unix.Stat_t
	if err := unix.Fstat(a, &sa); err != nil {
		return false, fmt.Errorf("fstat netns: %w", err)
	}
	if err := unix.Fstat(b, &sb); err != nil {
		return false, fmt.Errorf("fstat netns: %w", err)
	}
	return sa.Dev == sb.Dev && sa.Ino == sb.Ino, nil
}
