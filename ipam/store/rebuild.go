package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"syscall"
	"time"
)

// Rebuild replaces the lease store at path with one holding exactly leases
// (rebuilt from the pods, say; the caller has checked them). The old file
// and its side record are moved aside as <name>.damaged-<UTC time>, never
// deleted; the returned paths say where. A raild that holds the store open
// makes Rebuild fail: stop it first. On failure the old files are put back.
func Rebuild(path string, leases []Lease, now time.Time) (movedAside []string, retErr error) {
	unlock, err := lockStore(path)
	if err != nil {
		return nil, err
	}
	defer unlock()
	suffix := ".damaged-" + now.UTC().Format("20060102T150405.000000000Z")
	for _, p := range []string{path, seqPath(path)} {
		aside := p + suffix
		if err := os.Rename(p, aside); errors.Is(err, fs.ErrNotExist) {
			continue
		} else if err != nil {
			return nil, errors.Join(fmt.Errorf("ipam: rebuild: move %s aside: %w", p, err), putBack(path, movedAside, suffix))
		}
		movedAside = append(movedAside, aside)
	}
	defer func() {
		if retErr != nil {
			retErr = errors.Join(retErr, putBack(path, movedAside, suffix))
			movedAside = nil
		}
	}()
	return movedAside, writeLeases(path, leases)
}

// lockStore takes the lock bbolt takes, so a running raild is not robbed
// of its file.
func lockStore(path string) (unlock func(), err error) {
	f, err := openNoFollow(path, os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return func() {}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("ipam: rebuild: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("ipam: rebuild: %s is in use (is raild running? stop it first): %w", path, err)
	}
	return func() { f.Close() }, nil
}

// writeLeases makes a fresh store at path holding leases, in one commit.
func writeLeases(path string, leases []Lease) error {
	st, _, err := Open(path, Options{})
	if err != nil {
		return err
	}
	op := &writeOp{probe: true}
	for _, l := range leases {
		rec, err := encodeLease(l)
		if err != nil {
			return errors.Join(err, st.Close())
		}
		op.putLeases = append(op.putLeases, rec)
	}
	return errors.Join(st.commit(op), st.Close())
}

// putBack undoes the moves aside of a failed rebuild: the old files go
// back, and what the rebuild made where there was none is removed (a new
// side record beside an old store would vouch for it).
func putBack(path string, movedAside []string, suffix string) error {
	var errs []error
	for _, p := range []string{path, seqPath(path)} {
		err := removeIfExists(p)
		if slices.Contains(movedAside, p+suffix) && err == nil {
			err = os.Rename(p+suffix, p)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("ipam: put %s back: %w", p, err))
		}
	}
	return errors.Join(errs...)
}

func removeIfExists(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("ipam: remove %s: %w", path, err)
	}
	return nil
}
