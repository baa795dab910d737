package statedir

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/railcni/rail/daemon/config"
	"github.com/railcni/rail/ipam"
)

// LeaseStorePath is the lease store's file in the state dir (its side
// record sits beside it).
func LeaseStorePath(stateDir string) string { return filepath.Join(stateDir, "leases.db") }

// OpenLeaseStore opens the lease store. A damaged one, found at start or
// while raild runs, says in one line the file, what is wrong, and the
// command that fixes it: at start raild stops with it, later every write
// (ADD, DEL) fails with it and STATUS and /readyz report it. vfOf finds
// the VFs of vf-mode leases an older raild wrote (ipam.Options.VFOf).
func OpenLeaseStore(cfg *config.Config, pools *ipam.Pools, vfOf func(id string) (pci, port string, ok bool)) (*ipam.Allocator, error) {
	hint := fmt.Sprintf("refusing to serve: with raild stopped, run `raild recover --config <raild's config> --state-dir %s` to rebuild the leases from the pods on this node (the damaged file is kept)", cfg.StateDir)
	alloc, err := ipam.Open(LeaseStorePath(cfg.StateDir), pools, ipam.Options{Cooldown: cfg.CooldownDuration, DamagedHint: hint, VFOf: vfOf})
	if errors.Is(err, ipam.ErrDamaged) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("open lease store: %w", err)
	}
	return alloc, nil
}
