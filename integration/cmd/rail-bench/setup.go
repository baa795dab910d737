package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/railcni/rail/integration/harness"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

// namePrefix starts the names of every netns and link the bench creates.
const namePrefix = "rb"

// noopPlugin is the exec floor's plugin type (integration/cmd/cni-noop).
const noopPlugin = "cni-noop"

// checkSetup explains what is missing before anything is created.
func checkSetup(opt options) error {
	if os.Geteuid() != 0 {
		return errors.New("needs root: it creates network namespaces, veth, macvlan and ptp links (run `sudo make bench`)")
	}
	for _, name := range []string{"raild", "rail"} {
		path := filepath.Join(opt.bin, name)
		if info, err := os.Stat(path); err != nil || info.IsDir() || info.Mode()&0o111 == 0 {
			return fmt.Errorf("--bin %s: no executable %s (run `make build` first, or point --bin at the built binaries)", opt.bin, name)
		}
	}
	return nil
}

// prepareBins returns the rail binaries and a plugin directory holding
// the upstream plugins (linked from upstream) and cni-noop (built from
// this repository), and a function that removes that directory.
func prepareBins(opt options, log io.Writer) (_ harness.Bins, upstream string, cleanup func(), retErr error) {
	railDir, err := filepath.Abs(opt.bin)
	if err != nil {
		return harness.Bins{}, "", nil, fmt.Errorf("--bin %s: %w", opt.bin, err)
	}
	upstream = opt.plugins
	if upstream == "" {
		fmt.Fprintln(log, "rail-bench: preparing the upstream CNI plugins (built once from the Go module cache)...")
		if upstream, err = harness.UpstreamPluginDir(harness.DefaultCacheDir()); err != nil {
			return harness.Bins{}, "", nil, err
		}
	}
	dir, err := os.MkdirTemp("", "rail-bench-plugins-")
	if err != nil {
		return harness.Bins{}, "", nil, fmt.Errorf("plugin dir: %w", err)
	}
	cleanup = func() { _ = os.RemoveAll(dir) }
	defer func() {
		if retErr != nil {
			cleanup()
		}
	}()
	if err := linkPlugins(upstream, dir); err != nil {
		return harness.Bins{}, "", nil, err
	}
	if err := noopInto(railDir, dir); err != nil {
		return harness.Bins{}, "", nil, err
	}
	return harness.Bins{Rail: railDir, Plugins: dir}, upstream, cleanup, nil
}

// noopInto puts the no-op plugin into dir: linked from the rail binaries'
// dir when it was built there (a rig's guest has no Go toolchain), else
// built from this repository.
func noopInto(railDir, dir string) error {
	built := filepath.Join(railDir, noopPlugin)
	if info, err := os.Stat(built); err == nil && !info.IsDir() && info.Mode()&0o111 != 0 {
		return os.Symlink(built, filepath.Join(dir, noopPlugin))
	}
	if err := harness.BuildPackages(dir, "./integration/cmd/"+noopPlugin); err != nil {
		return fmt.Errorf("build the no-op plugin: %w", err)
	}
	return nil
}

// linkPlugins links every upstream plugin the bench runs into dir.
func linkPlugins(upstream, dir string) error {
	for _, p := range harness.UpstreamPlugins {
		name := filepath.Base(p)
		src := filepath.Join(upstream, name)
		if _, err := os.Stat(src); err != nil {
			return fmt.Errorf("--plugins %s: no %s: %w", upstream, name, err)
		}
		if err := os.Symlink(src, filepath.Join(dir, name)); err != nil {
			return fmt.Errorf("link plugin %s: %w", name, err)
		}
	}
	return nil
}

// benchMachine is the simulated node's name in its fake sysfs.
const benchMachine = "bench-1gpu-sriov"

// benchHost is one GPU and one RoCE ConnectX-7 card with one VF per pod
// of the largest burst: in move mode every pod of a burst takes a NIC of
// its own, with rail as with host-device.
func benchHost(vfs int) fakesys.Host {
	funcs := make([]fakesys.Func, vfs)
	for i := range funcs {
		funcs[i] = fakesys.Func{RDMA: nicName(i + 1), LinkLayer: "Ethernet"}
	}
	pf := fakesys.Func{RDMA: nicName(0), LinkLayer: "Ethernet", VFs: funcs}
	return fakesys.Host{Roots: []fakesys.Root{{Bus: 0x17, NUMA: 0, Ports: []fakesys.Slot{
		{GPU: &fakesys.GPU{Model: "NVIDIA H100 80GB HBM3"}},
		{Card: &fakesys.Card{Model: "ConnectX-7", Funcs: []fakesys.Func{pf}}},
	}}}}
}

// nicName is the RDMA device of function i (0 the PF, then the VFs).
func nicName(i int) string { return fmt.Sprintf("mlx5_%d", i) }

// newBenchNode starts the simulated node with raild.
func newBenchNode(bins harness.Bins, maxPods int) (*harness.Node, error) {
	host := benchHost(maxPods)
	node, err := harness.NewNode(harness.NodeOptions{Machine: benchMachine, Host: &host, NamePrefix: namePrefix, Bins: bins})
	if err != nil {
		return nil, fmt.Errorf("set up the simulated node: %w", err)
	}
	return node, nil
}
