// Package raild holds process-level tests of raild and rail-ipam: the real
// binaries, built by TestMain, run against a simulated GPU node (a fakesys
// root) with leases on disk. The tests need no root and no namespaces: they
// prove the lease store under concurrency, SIGKILL and restart, and the
// benchmarks measure allocation rate, plugin round trips (against upstream
// host-local) and raild's memory.
//
//	go test -race -count=1 ./integration/raild/
//	go test -run '^$' -bench . ./integration/raild/
package raild
