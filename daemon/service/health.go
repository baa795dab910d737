package service

// StoreHealth is nil while the lease store can write, else why not; STATUS
// and /readyz report it.
func (s *Service) StoreHealth() error { return s.alloc.Health() }
