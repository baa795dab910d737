// Package netns proves Rail end to end in real network namespaces on this
// kernel: raild as a process, the rail plugin and upstream CNI plugins
// exec'd by libcni, stand-in NICs as veth ends. The tests need root; as
// any other user they skip.
//
// Environment:
//
//	RAIL_BIN        directory with prebuilt raild, rail, rail-ipam (default: built into a temp dir)
//	RAIL_TEST_CACHE where the upstream CNI plugins are built once (default: ~/.cache/rail-test)
//	RAIL_CYCLES     ADD/DEL cycles of TestCyclesLeakNothing (default 1000)
package netns

import (
	"os"
	"testing"

	"github.com/railcni/rail/integration/harness"
)

// bins is set once by TestMain before any test runs, then only read.
var bins harness.Bins

func TestMain(m *testing.M) {
	// cni-noop: the exec floor of BenchmarkPassThroughAdd, a chained plugin that does nothing.
	os.Exit(harness.RunRootTests(m, "integration/netns", &bins, "./integration/cmd/cni-noop"))
}
