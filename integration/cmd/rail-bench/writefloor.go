package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// writeFloorSize is the write floor's block: one page, as small as any
// commit of the lease store (a bbolt page, its meta page, the side
// record's sector) can be.
const writeFloorSize = 4096

// writeFloor is the durable write the CNI standard's answer waits for:
// one 4 KiB block written in place (pwrite) and made durable with
// fdatasync, as the lease store makes each commit durable before raild
// answers, on the filesystem of raild's state dir, in a file beside it.
// ADD and DEL each make one such write (raild's allocate and release each
// commit one transaction).
type writeFloor struct {
	path  string
	f     *os.File
	block []byte
}

// newWriteFloor creates the floor's file in dir, which must be on the
// same filesystem as stateDir (the bench puts it beside raild's state
// dir), and writes it once durably so every measured write overwrites a
// block the filesystem already holds, as the store's commits do.
func newWriteFloor(dir, stateDir string) (*writeFloor, error) {
	if err := sameFilesystem(dir, stateDir); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "write-floor")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("write floor: %w", err)
	}
	w := &writeFloor{path: path, f: f, block: make([]byte, writeFloorSize)}
	if err := w.write(); err != nil {
		return nil, errors.Join(err, w.close())
	}
	return w, nil
}

// sameFilesystem says why a and b are not on one filesystem, if they are
// not.
func sameFilesystem(a, b string) error {
	var sa, sb unix.Stat_t
	if err := unix.Stat(a, &sa); err != nil {
		return fmt.Errorf("write floor: %s: %w", a, err)
	}
	if err := unix.Stat(b, &sb); err != nil {
		return fmt.Errorf("write floor: raild's state dir %s: %w", b, err)
	}
	if sa.Dev != sb.Dev {
		return fmt.Errorf("write floor: %s is not on the filesystem of raild's state dir %s", a, b)
	}
	return nil
}

// write makes one block durable: pwrite at offset 0, then fdatasync.
func (w *writeFloor) write() error {
	w.block[0]++ // a block that changes, as a commit's does
	if _, err := w.f.WriteAt(w.block, 0); err != nil {
		return fmt.Errorf("write floor: write %s: %w", w.path, err)
	}
	if err := unix.Fdatasync(int(w.f.Fd())); err != nil {
		return fmt.Errorf("write floor: fdatasync %s: %w", w.path, err)
	}
	return nil
}

func (w *writeFloor) add(context.Context, int) error { return w.write() }
func (w *writeFloor) del(context.Context, int) error { return w.write() }
func (w *writeFloor) capacity() int                  { return 1 }
func (w *writeFloor) tidy(int) error                 { return nil }

// close closes and removes the file.
func (w *writeFloor) close() error {
	return errors.Join(w.f.Close(), os.Remove(w.path))
}
