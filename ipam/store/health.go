package store

func (s *Store) setWriteErr(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writeErr = err
}

// Health is nil while writes succeed. After a failed write it tries one
// write of its own (a commit without changes), so a store whose disk came
// back is healthy again without waiting for a pod.
func (s *Store) Health() error {
	s.mu.Lock()
	err := s.writeErr
	s.mu.Unlock()
	if err == nil {
		return nil
	}
	if s.probe() == nil {
		s.mu.Lock()
		err = s.writeErr
		s.mu.Unlock()
	}
	return err
}
