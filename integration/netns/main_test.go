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
	"fmt"
	"os"
	"testing"

	"github.com/railcni/rail/integration/harness"
)

// bins is set once by TestMain before any test runs, then only read.
var bins harness.Bins

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if os.Geteuid() != 0 {
		return m.Run() // every test skips with the reason
	}
	cleanup, err := prepareBins()
	if err != nil {
		fmt.Fprintf(os.Stderr, "integration/netns: %v\n", err)
		return 1
	}
	defer cleanup()
	return m.Run()
}

// prepareBins builds the rail binaries (unless RAIL_BIN names them) and
// the upstream plugins (cached across runs).
func prepareBins() (func(), error) {
	plugins, err := harness.UpstreamPluginDir(harness.DefaultCacheDir())
	if err != nil {
		return nil, err
	}
	bins.Plugins = plugins
	if dir := os.Getenv("RAIL_BIN"); dir != "" {
		bins.Rail = dir
		return func() {}, nil
	}
	dir, err := os.MkdirTemp("", "rail-bin-")
	if err != nil {
		return nil, fmt.Errorf("temp dir for rail binaries: %w", err)
	}
	if err := harness.BuildRail(dir); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	// The exec floor of BenchmarkPassThroughAdd: a chained plugin that does nothing.
	if err := harness.BuildPackages(dir, "./integration/cmd/cni-noop"); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	bins.Rail = dir
	return func() { os.RemoveAll(dir) }, nil
}
