// Package ipam holds raild's IP pools and the allocator in front of the
// lease store.
//
// Pools come from the daemon's YAML config (PoolConfig, validated by
// NewPools). Leases are keyed by (sandbox ID, pod interface name) and live
// in the lease store (package ipam/store, a bbolt file); an Allocator keeps
// an in-memory index of them, reserves addresses under a mutex and makes
// every change durable before it returns: each change is one store session,
// committed (concurrent sessions share transactions) or cancelled.
// Released addresses wait a cooldown, recorded on disk, before reuse.
// The index also says which leases name each NIC, in which mode (NICUse):
// it is the one record of who holds a NIC. AllocatePlaced lets a caller
// choose its requests from it and reserves them in the same critical
// section, so concurrent placements never see the same NIC free.
//
// Open refuses a store that cannot be trusted (ErrDamaged, see the store
// package) and leases that cannot all be true (one address twice). Rebuild
// replaces such a store with leases rebuilt from the pods. Health says
// whether the store can still write.
//
// The package imports nothing else of the project but ipam/store, and never
// logs.
package ipam
