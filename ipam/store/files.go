package store

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// openNoFollow is os.OpenFile that never goes through a symbolic link at
// the last component: the state dir is root's, and a link planted there
// must not make root read or write another file. It has bbolt's
// Options.OpenFile signature, so bbolt opens the store the same way.
func openNoFollow(name string, flag int, perm os.FileMode) (*os.File, error) {
	f, err := os.OpenFile(name, flag|syscall.O_NOFOLLOW, perm)
	if errors.Is(err, syscall.ELOOP) {
		return nil, fmt.Errorf("%s: a symbolic link: the lease store is never opened through a link; put the file itself there", name)
	}
	return f, err
}

// Exists says whether a lease store was ever made at path: its file
// or its side record is there (whatever they hold). Neither is a first
// start, or a store that was removed whole.
func Exists(path string) (bool, error) {
	for _, p := range []string{path, seqPath(path)} {
		_, err := os.Lstat(p)
		if err == nil {
			return true, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return false, fmt.Errorf("ipam: %w", err)
		}
	}
	return false, nil
}

// readNoFollow reads a small file through openNoFollow.
func readNoFollow(path string) ([]byte, error) {
	f, err := openNoFollow(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, 1<<16))
}
