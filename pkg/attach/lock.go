package attach

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/railcni/rail/pkg/nsfs"
)

// LockPod takes an exclusive lock on the pod network namespace at
// podNetns and returns what releases it. The lock is a flock on the
// namespace's nsfs inode, which every path to that namespace shares (the
// runtime's bind mount, /proc/<pid>/ns/net), so two plugin processes
// working on one pod — a runtime's repeated or concurrent ADDs — run one
// after the other: the second finds what the first did, never half of it.
// The kernel drops the lock when the process dies.
func LockPod(podNetns string) (unlock func(), err error) {
	h, err := nsfs.Open(podNetns) // never waits: a FIFO is refused, not opened
	if err != nil {
		return nil, fmt.Errorf("lock pod netns: %w", err)
	}
	f := os.NewFile(uintptr(h), podNetns)
	for {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("lock pod netns %s: %w", podNetns, err)
	}
	// Closing the only descriptor of the open file releases the flock; the
	// file was opened read-only, so closing it has nothing to lose.
	return func() { _ = f.Close() }, nil
}
