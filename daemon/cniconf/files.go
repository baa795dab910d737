package cniconf

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// ErrChanged says a file changed between reading and replacing it; the
// edit is dropped and is to be done again on the new bytes.
var ErrChanged = errors.New("changed while being edited")

// Files rail refuses to read or edit (each is retried, in case it changes).
var (
	// ErrTooLarge: a CNI config larger than MaxConfSize.
	ErrTooLarge = fmt.Errorf("larger than %d MiB, more than any CNI config needs", MaxConfSize>>20)
	// ErrSymlink: rail renames its edit over the file, which would replace
	// a link with a file and cut the primary's later edits (made through
	// the link) off from the runtime.
	ErrSymlink = errors.New("a symbolic link: rail does not edit through links, since its edit would replace the link " +
		"with a file and the primary's later edits of the link's target would no longer reach the runtime")
	// ErrNotRegular: a FIFO, device or directory named like a config.
	ErrNotRegular = errors.New("not a regular file")
)

// MaxConfSize bounds the CNI configs rail reads: real ones are a few KiB
// (Multus' with its delegates, tens of KiB), and parsing takes about 11
// times a file's size in memory, so 1 MiB keeps raild far below the
// chart's memory limit whatever lands in the conf dir.
const MaxConfSize = 1 << 20

// readConf reads a config, a backup or a list rail made: a regular file,
// not through a link, of at most MaxConfSize bytes (a larger one is
// refused from its size, without being read). Opening does not block on a
// FIFO.
func readConf(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ELOOP) {
		target, _ := os.Readlink(path)
		return nil, fmt.Errorf("%s is %w (to %s); make it a regular file, or use rail through Multus (cni.mode nad)", path, ErrSymlink, target)
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("stat %s: %w", path, err)
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is %w (%v): rail reads and edits only regular files", path, ErrNotRegular, info.Mode().Type())
	}
	if info.Size() > MaxConfSize {
		return nil, tooLarge(path, info.Size())
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxConfSize+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(data) > MaxConfSize {
		return nil, tooLarge(path, int64(len(data)))
	}
	return data, nil
}

func tooLarge(path string, size int64) error {
	return fmt.Errorf("%s holds %d bytes: %w; left alone (raild does not read it)", path, size, ErrTooLarge)
}

// refused says whether err is readConf refusing a file for what it is,
// as opposed to failing to read it.
func refused(err error) bool {
	return errors.Is(err, ErrTooLarge) || errors.Is(err, ErrSymlink) || errors.Is(err, ErrNotRegular)
}

// WriteFile replaces path atomically with what r yields: a temp file in the
// same directory (named so no runtime loads it), fsync, chmod, rename, fsync
// of the directory. A reader sees the old file or the new one, never a part.
func WriteFile(path string, r io.Reader, perm os.FileMode) error {
	return writeFile(path, r, perm, nil)
}

// writeFile is WriteFile with a check run just before the rename; when it
// fails the temp file is removed and path is left as it was.
func writeFile(path string, r io.Reader, perm os.FileMode, beforeRename func() error) (retErr error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+tempInfix+"*")
	if err != nil {
		return fmt.Errorf("create temp file next to %s: %w", path, err)
	}
	defer func() {
		if retErr != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err := io.Copy(tmp, r); err != nil {
		return fmt.Errorf("write %s: %w", tmp.Name(), err)
	}
	if err := tmp.Chmod(perm); err != nil {
		return fmt.Errorf("chmod %s: %w", tmp.Name(), err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("fsync %s: %w", tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("close %s: %w", tmp.Name(), err)
	}
	if beforeRename != nil {
		if err := beforeRename(); err != nil {
			return err
		}
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("rename into %s: %w", path, err)
	}
	return syncDir(filepath.Dir(path))
}

// replaceIfUnchanged writes data to path only if path still holds before.
func replaceIfUnchanged(path string, before, data []byte, perm os.FileMode) error {
	return writeFile(path, bytes.NewReader(data), perm, func() error { return checkUnchanged(path, before) })
}

// checkUnchanged fails with ErrChanged unless path still holds before.
func checkUnchanged(path string, before []byte) error {
	now, err := readConf(path)
	if err != nil || !bytes.Equal(now, before) {
		return fmt.Errorf("%s: %w", path, ErrChanged)
	}
	return nil
}

// RemoveStaleTemps deletes the temp files a WriteFile of path left behind
// when its process was killed mid-write. Only one writer may write path at
// a time (the conf dir's lock; install-cni alone for the binaries).
func RemoveStaleTemps(path string) error {
	entries, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		return fmt.Errorf("read %s: %w", filepath.Dir(path), err)
	}
	prefix := "." + filepath.Base(path) + tempInfix
	var errs []error
	for _, e := range entries {
		if e.Type().IsRegular() && strings.HasPrefix(e.Name(), prefix) {
			errs = append(errs, removeFile(filepath.Join(filepath.Dir(path), e.Name())))
		}
	}
	return errors.Join(errs...)
}

// removeFile deletes path; a file already gone is fine.
func removeFile(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove %s: %w", path, err)
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("open %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("fsync %s: %w", dir, err)
	}
	return nil
}

// lockDir takes an exclusive flock on the directory itself, so that raild
// serve's watcher and raild install-cni (init container, preStop) never
// edit the conf dir at the same time. No lock file is left behind.
func lockDir(dir string) (unlock func(), err error) {
	d, err := os.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("open conf dir: %w", err)
	}
	if err := unix.Flock(int(d.Fd()), unix.LOCK_EX); err != nil {
		d.Close()
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	return func() {
		_ = unix.Flock(int(d.Fd()), unix.LOCK_UN)
		d.Close()
	}, nil
}

// fileMode is the permission bits of path, or def when it does not exist.
func fileMode(path string, def os.FileMode) os.FileMode {
	if info, err := os.Stat(path); err == nil {
		return info.Mode().Perm()
	}
	return def
}
