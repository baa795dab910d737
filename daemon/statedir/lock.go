package statedir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// lockFileName is the lock file in the state dir. It stays there; only the
// flock on it says whether a raild holds the directory.
const lockFileName = "raild.lock"

// Lock is an exclusive flock on the state dir's lock file, held for
// the life of the process: two raild sharing one lease store would hand
// out the same addresses.
type Lock struct {
	file *os.File
}

// LockDir makes sure dir is raild's own (Ensure), then takes its lock, or
// says which process holds it. The lock goes with the process, however it
// ends.
func LockDir(dir string) (*Lock, error) {
	if err := Ensure(dir); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, lockFileName)
	f, err := openFile(path, os.O_RDWR|os.O_CREATE)
	if err != nil {
		return nil, fmt.Errorf("state dir lock: %w", err)
	}
	if err := flockNonBlocking(f); err != nil {
		holder := readHolder(f)
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("state dir %s: in use by another raild (pid %s): stop it first, or give this one another --state-dir and --socket", dir, holder)
		}
		return nil, fmt.Errorf("state dir lock %s: %w", path, err)
	}
	if err := writeHolder(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("state dir lock %s: %w", path, err)
	}
	return &Lock{file: f}, nil
}

func flockNonBlocking(f *os.File) error {
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err != unix.EINTR {
			return err
		}
	}
}

// readHolder returns the pid the holder wrote, or "unknown".
func readHolder(f *os.File) string {
	buf := make([]byte, 32)
	n, _ := f.ReadAt(buf, 0)
	pid := strings.TrimSpace(string(buf[:n]))
	if _, err := strconv.Atoi(pid); err != nil {
		return "unknown"
	}
	return pid
}

// writeHolder records this process's pid for the next one to name.
func writeHolder(f *os.File) error {
	if err := f.Truncate(0); err != nil {
		return err
	}
	_, err := f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return err
}

// Unlock releases the state dir.
func (l *Lock) Unlock() error { return l.file.Close() }
