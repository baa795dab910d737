package ipam

import "fmt"

// Health is nil when the lease store can write, else why not (the last
// write's error, still failing on a fresh try). CNI STATUS and /readyz
// report it.
func (a *Allocator) Health() error {
	a.mu.Lock()
	closed := a.closed
	a.mu.Unlock()
	if closed {
		return fmt.Errorf("ipam: lease store %s: %w", a.store.Path(), ErrClosed)
	}
	if err := a.store.Health(); err != nil {
		return fmt.Errorf("lease store cannot write: %w", err)
	}
	return nil
}
