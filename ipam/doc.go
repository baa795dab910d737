// Package ipam holds raild's IP pools and the lease store behind them.
//
// Pools come from the daemon's YAML config (PoolConfig, validated by
// NewPools). Leases are keyed by (sandbox ID, pod interface name) and live
// in a bbolt file; an Allocator keeps an in-memory index of them, reserves
// addresses under a mutex and makes every change durable before it returns,
// coalescing concurrent writers into shared transactions (bbolt's DB.Batch).
// Released addresses wait a cooldown, recorded on disk, before reuse.
// The index also says which leases name each NIC, in which mode (NICUse):
// it is the one record of who holds a NIC. AllocatePlaced lets a caller
// choose its requests from it and reserves them in the same critical
// section, so concurrent placements never see the same NIC free.
//
// Open checks the whole store before anything is handed out (store_open.go):
// records carry checksums, each commit's sequence is also kept in a side
// record beside the file, so an empty, missing, truncated, damaged or
// rolled-back store is a *DamagedError (ErrDamaged) and never a fresh
// start or a panic. Rebuild replaces such a store with leases rebuilt from
// the pods. Health says whether the store can still write.
//
// The package imports nothing else of the project and never logs.
package ipam
