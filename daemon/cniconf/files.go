package cniconf

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// ErrChanged says a file changed between reading and replacing it; the
// edit is dropped and is to be done again on the new bytes.
var ErrChanged = errors.New("changed while being edited")

// WriteFile replaces path atomically with what r yields: a temp file in the
// same directory (named so no runtime loads it), fsync, chmod, rename, fsync
// of the directory. A reader sees the old file or the new one, never a part.
func WriteFile(path string, r io.Reader, perm os.FileMode) error {
	return writeFile(path, r, perm, nil)
}

// writeFile is WriteFile with a check run just before the rename; when it
// fails the temp file is removed and path is left as it was.
func writeFile(path string, r io.Reader, perm os.FileMode, beforeRename func() error) (retErr error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".rail-tmp-*")
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
	now, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(now, before) {
		return fmt.Errorf("%s: %w", path, ErrChanged)
	}
	return nil
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
