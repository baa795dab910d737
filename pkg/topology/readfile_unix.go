//go:build unix

package topology

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// maxAttrSize bounds one read: sysfs attributes are at most a page and
// the procfs files read here are far smaller.
const maxAttrSize = 64 << 10

// readFile reads a small regular file with plain open/fstat/read/close.
// os.ReadFile also registers every file with the runtime poller (fcntl,
// epoll_ctl), which more than doubles the system calls of a discovery that
// reads a few hundred attributes.
//
// Reads never block: the file is opened non-blocking (a FIFO opens at once
// instead of waiting for a writer) and anything but a regular file (FIFO,
// socket, device node, directory) is refused before the first read; the
// size read is bounded. sysfs and procfs attributes are regular files.
func readFile(path string) ([]byte, error) { return readFileMax(path, maxAttrSize) }

// readFileMax is readFile for a file of at most max bytes.
func readFileMax(path string, max int) ([]byte, error) {
	fd, err := openRetry(path)
	if err == syscall.ENXIO { // a socket (or a device without a driver) cannot be opened: say which
		var st syscall.Stat_t
		if syscall.Stat(path, &st) == nil && notRegular(uint32(st.Mode)) != nil {
			err = notRegular(uint32(st.Mode))
		}
	}
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return nil, &os.PathError{Op: "stat", Path: path, Err: err}
	}
	if err := notRegular(uint32(st.Mode)); err != nil {
		return nil, &os.PathError{Op: "read", Path: path, Err: err}
	}
	buf := make([]byte, 0, 128)
	for {
		if len(buf) == cap(buf) {
			if cap(buf) > max {
				return nil, &os.PathError{Op: "read", Path: path, Err: fmt.Errorf("larger than %d bytes", max)}
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
			if len(buf) > max {
				return nil, &os.PathError{Op: "read", Path: path, Err: fmt.Errorf("larger than %d bytes", max)}
			}
			return buf, nil
		}
		buf = buf[:len(buf)+n]
	}
}

// notRegular is nil for a regular file's mode and otherwise an error that
// names the file's type.
func notRegular(mode uint32) error {
	switch mode & syscall.S_IFMT {
	case syscall.S_IFREG:
		return nil
	case syscall.S_IFIFO:
		return errors.New("is a FIFO, not a regular file")
	case syscall.S_IFSOCK:
		return errors.New("is a socket, not a regular file")
	case syscall.S_IFCHR, syscall.S_IFBLK:
		return errors.New("is a device node, not a regular file")
	case syscall.S_IFDIR:
		return errors.New("is a directory, not a regular file")
	default:
		return errors.New("is not a regular file")
	}
}

func openRetry(path string) (int, error) {
	for {
		fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0)
		if err != syscall.EINTR {
			return fd, err
		}
	}
}
