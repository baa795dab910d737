package process

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// maxProcFile bounds one read of a /proc file (environ is at most the
// argument limit, a few MiB; limits a few KiB).
const maxProcFile = 8 << 20

// Dir is an open /proc/<pid> directory checked against a Ref. procfs ties
// the descriptor to that process: once it exits, reads through it fail
// even when the pid is reused, so what Dir reads is the pinned process's
// or nothing.
type Dir struct {
	ref Ref
	fd  int
}

// Open opens the /proc directory of a pinned process; it fails with
// ErrGone when the pid is free or another process holds it.
func Open(proc string, ref Ref) (*Dir, error) {
	if ref.Pid <= 0 || ref.Start == 0 {
		return nil, fmt.Errorf("pid %d (not pinned): %w", ref.Pid, ErrGone)
	}
	fd, err := unix.Open(filepath.Join(proc, strconv.Itoa(ref.Pid)), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("pid %d: %w (%w)", ref.Pid, ErrGone, err)
	}
	d := &Dir{ref: ref, fd: fd}
	if err := d.Alive(); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

// Close releases the descriptor.
func (d *Dir) Close() { _ = unix.Close(d.fd) }

// Alive fails with ErrGone when the pinned process exited (or its pid
// was reused before Open): call it after the reads to know they were the
// process's own.
func (d *Dir) Alive() error {
	data, err := d.ReadFile("stat")
	if err != nil {
		return fmt.Errorf("pid %d: %w (%w)", d.ref.Pid, ErrGone, err)
	}
	start, err := startTime(data)
	if err != nil {
		return fmt.Errorf("pid %d: %w", d.ref.Pid, err)
	}
	if start != d.ref.Start {
		return fmt.Errorf("pid %d started at %d, not %d: another process holds the pid: %w", d.ref.Pid, start, d.ref.Start, ErrGone)
	}
	return nil
}

// ReadFile reads one file of the process's /proc directory (limits,
// environ), not following a link.
func (d *Dir) ReadFile(name string) ([]byte, error) {
	fd, err := unix.Openat(d.fd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: d.path(name), Err: err}
	}
	f := os.NewFile(uintptr(fd), d.path(name))
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, &os.PathError{Op: "stat", Path: d.path(name), Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, &os.PathError{Op: "read", Path: d.path(name), Err: errors.New("not a regular file")}
	}
	data, err := io.ReadAll(io.LimitReader(f, maxProcFile+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxProcFile {
		return nil, &os.PathError{Op: "read", Path: d.path(name), Err: fmt.Errorf("larger than %d bytes", maxProcFile)}
	}
	return data, nil
}

// StatInRoot stats path as the process would open it: resolved inside its
// root directory (/proc/<pid>/root), links included, where an absolute
// link or ".." never leaves that root. The final element's link is
// followed too (a container opening /dev/infiniband/uverbs0 opens what it
// points to in the container).
func (d *Dir) StatInRoot(path string) (unix.Stat_t, error) {
	root, err := unix.Openat(d.fd, "root", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return unix.Stat_t{}, &os.PathError{Op: "open", Path: d.path("root"), Err: err}
	}
	defer unix.Close(root)
	st, err := statInRoot(root, path, true)
	if err != nil {
		return st, &os.PathError{Op: "stat", Path: d.path("root") + " " + path, Err: err}
	}
	return st, nil
}

func (d *Dir) path(name string) string { return "/proc/" + strconv.Itoa(d.ref.Pid) + "/" + name }
