package store

import (
	"errors"
	"fmt"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// roomToGrow is what a probe asks the file system for beyond the end of
// the file: a few commits' worth of pages.
const roomToGrow = 256 << 10

func (s *Store) setWriteErr(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writeErr = err
}

// Health is nil while the store can write. A damaged store, or one whose
// write is stuck, is unhealthy for good (until the write ends). After a
// failed write it tries a write of its own (a commit without changes,
// after making sure the file can grow), so a store whose disk came back is
// healthy again without waiting for a pod, and a full disk is not taken
// for a healthy one because a commit that needs no new space succeeds.
func (s *Store) Health() error {
	s.mu.Lock()
	damage, err := s.damage, s.writeErr
	stuck := !s.busySince.IsZero() && time.Since(s.busySince) > s.opt.StuckAfter
	s.mu.Unlock()
	switch {
	case damage != nil:
		return damage
	case stuck:
		return s.stuckErr()
	case err == nil:
		return nil
	}
	if rerr := s.room(); rerr != nil {
		return errors.Join(err, rerr)
	}
	if s.probe() == nil {
		s.mu.Lock()
		err = s.writeErr
		s.mu.Unlock()
	}
	return err
}

// room reserves roomToGrow bytes beyond the end of the file (fallocate,
// keeping its size): no space or quota left is the failure a commit that
// grows the file would meet. A file system without fallocate is not asked.
func (s *Store) room() error {
	info, err := s.file.Stat()
	if err != nil {
		return fmt.Errorf("ipam: %w", err)
	}
	err = unix.Fallocate(int(s.file.Fd()), unix.FALLOC_FL_KEEP_SIZE, info.Size(), roomToGrow)
	if err == nil || errors.Is(err, syscall.EOPNOTSUPP) || errors.Is(err, syscall.ENOSYS) {
		return nil
	}
	return fmt.Errorf("ipam: %s cannot grow: %w", s.path, err)
}
