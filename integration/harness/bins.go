package harness

import (
	"fmt"
	"os"
)

// PrepareBins returns where the binaries under test are: the rail binaries
// from $RAIL_BIN, else built with the extra packages of this module (e.g.
// "./integration/cmd/cni-noop") into a temp dir that cleanup removes, and
// the upstream CNI plugins built once into DefaultCacheDir.
func PrepareBins(extra ...string) (bins Bins, cleanup func(), err error) {
	plugins, err := UpstreamPluginDir(DefaultCacheDir())
	if err != nil {
		return Bins{}, nil, err
	}
	bins.Plugins = plugins
	if dir := os.Getenv("RAIL_BIN"); dir != "" {
		bins.Rail = dir
		return bins, func() {}, nil
	}
	dir, err := os.MkdirTemp("", "rail-bin-")
	if err != nil {
		return Bins{}, nil, fmt.Errorf("temp dir for rail binaries: %w", err)
	}
	if err := BuildRail(dir); err != nil {
		_ = os.RemoveAll(dir)
		return Bins{}, nil, err
	}
	if len(extra) > 0 {
		if err := BuildPackages(dir, extra...); err != nil {
			_ = os.RemoveAll(dir)
			return Bins{}, nil, err
		}
	}
	bins.Rail = dir
	return bins, func() { _ = os.RemoveAll(dir) }, nil
}
