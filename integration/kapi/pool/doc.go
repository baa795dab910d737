// Package pool proves RailPools against a real API server: raild's claim
// of a block per node (daemon/railpool) run by many processes at once,
// kept across restarts, freed by the garbage collector with its Node,
// and refused with the fix when a pool has no block left. The tests run
// the claim as raild does at start, in processes of this test binary.
package pool
