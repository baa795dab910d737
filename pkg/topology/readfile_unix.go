//go:build unix

package topology

import (
	"errors"
	"os"
	"syscall"
)

// maxAttrSize bounds one read: sysfs attributes are at most a page and
// the procfs files read here are far smaller.
const maxAttrSize = 64 << 10

// readFile reads a small file with plain open/read/close. os.ReadFile also
// registers every file with the runtime poller (fcntl, epoll_ctl, fstat),
// which more than doubles the system calls of a discovery that reads a few
// hundred attributes.
func readFile(path string) ([]byte, error) {
	fd, err := openRetry(path)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer syscall.Close(fd)
	buf := make([]byte, 0, 128)
	for {
		if len(buf) == cap(buf) {
			if cap(buf) >= maxAttrSize {
				return nil, &os.PathError{Op: "read", Path: path, Err: errors.New("file too large for a sysfs attribute")}
			}
			buf = append(buf, make([]byte, cap(buf))...)[:len(buf)]
		}
		n, err := syscall.Read(fd, buf[len(buf):cap(buf)])
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			return nil, &os.PathError{Op: "read", Path: path, Err: err}
		case n == 0:
			return buf, nil
		}
		buf = buf[:len(buf)+n]
	}
}

func openRetry(path string) (int, error) {
	for {
		fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != syscall.EINTR {
			return fd, err
		}
	}
}
