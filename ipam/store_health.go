package ipam

import "fmt"

func (s *store) setWriteErr(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writeErr = err
}

// health is nil while writes succeed. After a failed write it tries one
// write of its own (a commit without changes), so a store whose disk came
// back is healthy again without waiting for a pod.
func (s *store) health() error {
	s.mu.Lock()
	err := s.writeErr
	s.mu.Unlock()
	if err == nil {
		return nil
	}
	if s.commit(&writeOp{probe: true}) == nil {
		s.mu.Lock()
		err = s.writeErr
		s.mu.Unlock()
	}
	return err
}

// Health is nil when the lease store can write, else why not (the last
// write's error, still failing on a fresh try). CNI STATUS and /readyz
// report it.
func (a *Allocator) Health() error {
	a.mu.Lock()
	closed := a.closed
	a.mu.Unlock()
	if closed {
		return fmt.Errorf("ipam: lease store %s: %w", a.store.path, ErrClosed)
	}
	if err := a.store.health(); err != nil {
		return fmt.Errorf("lease store cannot write: %w", err)
	}
	return nil
}
