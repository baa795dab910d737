// Package store is raild's lease store: the leases and cooldowns of the
// allocator (package ipam) in a bbolt file, with a side record of the last
// commit beside it.
//
// Changes go through a Session: the caller collects the leases and
// cooldowns to write or delete, then Commit makes them durable together in
// one transaction (concurrent sessions share transactions and fsyncs), or
// Cancel drops them. Nothing reaches the file before Commit.
//
// Open checks the whole store before anything is handed out (open.go):
// records carry checksums, each commit's sequence is also kept in the side
// record (written once the commit's sessions are answered), so an empty, missing, truncated, damaged or rolled-back store is
// a *DamagedError (ErrDamaged) and never a fresh start or a panic. Rebuild
// replaces such a store. Health says whether the store can still write.
//
// The package imports nothing else of the project and never logs.
package store
