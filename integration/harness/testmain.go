package harness

import (
	"fmt"
	"os"
	"testing"
)

// RunRootTests runs a package of root integration tests: as root it first
// prepares the binaries, with the extra packages, into bins (see
// PrepareBins) and removes what it built afterwards; as any other user the
// tests run without them (and skip). It returns the exit code for os.Exit.
func RunRootTests(m *testing.M, pkg string, bins *Bins, extra ...string) int {
	if os.Geteuid() != 0 {
		return m.Run()
	}
	prepared, cleanup, err := PrepareBins(extra...)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", pkg, err)
		return 1
	}
	defer cleanup()
	*bins = prepared
	return m.Run()
}
