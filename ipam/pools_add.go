package ipam

import (
	"errors"
	"fmt"
)

// Add validates c as NewPools does, naming its fields under at, and adds
// it to the pools: allocations may use it as soon as Add returns. A pool
// whose name is taken, or whose addresses on this node overlap another
// pool's, is refused and nothing changes.
func (ps *Pools) Add(c PoolConfig, at string) error {
	p, err := buildPool(cloneConfig(c), at, ps.node)
	if err != nil {
		return err
	}
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if _, dup := ps.byName[p.Name()]; dup {
		return fmt.Errorf("%s.name %q: a pool of this name exists on this node: pool names must be unique", at, p.Name())
	}
	if errs := checkPoolOverlaps(append(ps.list[:len(ps.list):len(ps.list)], p)); len(errs) > 0 {
		return fmt.Errorf("%s: %w", at, errors.Join(errs...))
	}
	ps.list = append(ps.list, p)
	ps.byName[p.Name()] = p
	return nil
}
