// Package chaos keeps Rail honest under crashes and long churn, end to end
// in real network namespaces: the real rail and rail-ipam plugins exec'd by
// libcni, raild as a process, stand-in NICs as veth ends (see
// integration/harness). The tests need root; as any other user they skip.
//
// TestChaos SIGKILLs raild at seeded random moments while parallel workers
// create and tear down pods in move mode, macvlan mode and rail-ipam, over
// two pools, retrying as a kubelet would; after each restart it judges the
// node against a ledger of answered ADDs and DELs. TestSoak runs many
// ADD/DEL cycles mixed the same way and reports what leaked (links,
// addresses, routes, rules, leases, file descriptors: all must be 0) and
// raild's resident memory at start and end.
//
// Environment:
//
//	RAIL_SOAK=1        the long run (make soak): 20 kills over 1,000 pods, 10,000 cycles;
//	                   without it a short run for make test: 3 kills over 60 pods, 200 cycles
//	RAIL_CHAOS_SEED    replay a kill schedule (the seed is printed by every run)
//	RAIL_BIN           prebuilt raild, rail, rail-ipam (default: built into a temp dir)
//	RAIL_TEST_CACHE    where the upstream CNI plugins are built once
package chaos
