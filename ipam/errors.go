package ipam

import (
	"errors"
	"fmt"
	"strings"

	"github.com/railcni/rail/ipam/store"
)

// Sentinels for errors.Is; the typed errors below carry the details.
var (
	ErrUnknownPool   = errors.New("unknown pool")
	ErrExhausted     = errors.New("pool exhausted")
	ErrNoNodeSlice   = errors.New("pool has no addresses on this node")
	ErrLeaseConflict = errors.New("lease conflict")
	ErrClosed        = errors.New("allocator closed")
	// ErrDamaged is matched (errors.Is) by every DamagedError.
	ErrDamaged = store.ErrDamaged
)

// DamagedError says the lease store cannot be trusted (see store.DamagedError).
type DamagedError = store.DamagedError

// UnknownPoolError is returned for a pool name that is not configured.
type UnknownPoolError struct {
	Pool  string
	Known []string
}

func (e *UnknownPoolError) Error() string {
	known := "none are configured: add one under pools: in the raild config"
	if len(e.Known) > 0 {
		known = "want one of: " + strings.Join(e.Known, ", ")
	}
	if e.Pool == "" {
		return "pool name is empty: " + known
	}
	return fmt.Sprintf("unknown pool %q: %s", e.Pool, known)
}

// Is makes errors.Is(err, ErrUnknownPool) true.
func (e *UnknownPoolError) Is(target error) bool { return target == ErrUnknownPool }

// ExhaustedError is returned when a pool has no free address left.
type ExhaustedError struct {
	Pool    string
	Size    uint64 // addresses this node may hand out
	Used    uint64 // leased
	Cooling uint64 // released, waiting for the cooldown
}

func (e *ExhaustedError) Error() string {
	return fmt.Sprintf("pool %q exhausted: all %d addresses are taken (%d leased, %d cooling down after release): widen the pool, release leases or wait for the cooldown",
		e.Pool, e.Size, e.Used, e.Cooling)
}

// Is makes errors.Is(err, ErrExhausted) true.
func (e *ExhaustedError) Is(target error) bool { return target == ErrExhausted }

// NoNodeSliceError is returned when a pool lists nodes and this node is not one.
type NoNodeSliceError struct {
	Pool string
	Node string
}

func (e *NoNodeSliceError) Error() string {
	return fmt.Sprintf("pool %q has no addresses on node %q: add the node under the pool's nodes, or use another pool", e.Pool, e.Node)
}

// Is makes errors.Is(err, ErrNoNodeSlice) true.
func (e *NoNodeSliceError) Is(target error) bool { return target == ErrNoNodeSlice }

// LeaseConflictError is returned when a key already holds a lease made for
// another pool, network or attachment.
type LeaseConflictError struct {
	Existing  Lease
	Requested Request
}

func (e *LeaseConflictError) Error() string {
	x, r := e.Existing, e.Requested
	return fmt.Sprintf("sandbox %q interface %q already has a lease from pool %q (network %q, attachment %q), requested pool %q (network %q, attachment %q): release it first",
		x.Sandbox, x.IfName, x.Pool, x.Network, x.CNIIfName, r.Pool, r.Network, r.CNIIfName)
}

// Is makes errors.Is(err, ErrLeaseConflict) true.
func (e *LeaseConflictError) Is(target error) bool { return target == ErrLeaseConflict }
