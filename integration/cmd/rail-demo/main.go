// Command rail-demo is `make demo`: on this machine, as root, with nothing
// but Go, it simulates an 8×H100 node with 4 ConnectX-7 NICs inside network
// namespaces, runs raild with a kubelet stand-in that says which pod holds
// which GPUs, creates a "prefill" pod (GPUs 0,1) and a "decode" pod (GPUs
// 4,5) through the real CNI chain ptp → rail, shows which NIC each got and
// why, has them talk over the rail, tears everything down and shows that
// nothing is left.
//
// --machine picks another simulated node (fakesys's built-in machines with at
// least 4 GPUs; the decode pod then holds the first two GPUs of the second
// half) and --topology-file gives raild that node's NCCL topology file.
//
//	go run ./integration/cmd/rail-demo --bin bin [--keep] [--machine NAME] [--topology-file FILE]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

type options struct {
	bin          string
	plugins      string
	keep         bool
	machine      string
	topologyFile string
}

func main() {
	opt, err := parseFlags(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "rail-demo: %v\n", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, opt, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "rail-demo: %v\n", err)
		stop()
		os.Exit(1)
	}
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	fs := flag.NewFlagSet("rail-demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var opt options
	fs.StringVar(&opt.bin, "bin", "bin", "directory with raild and rail (make build)")
	fs.StringVar(&opt.plugins, "plugins", "", "directory with the upstream CNI plugins ptp and host-local (default: built once from the Go module cache)")
	fs.BoolVar(&opt.keep, "keep", false, "after the traffic, keep everything up for inspection until Ctrl-C, then tear down")
	fs.StringVar(&opt.machine, "machine", defaultMachine, "the simulated node: "+strings.Join(demoMachines(), ", "))
	fs.StringVar(&opt.topologyFile, "topology-file", "", "an NCCL topology file for raild (e.g. pkg/topology/testdata/ndv5-topo.xml with --machine azure-ndh100v5)")
	if err := fs.Parse(args); err != nil {
		return opt, err
	}
	if fs.NArg() > 0 {
		return opt, fmt.Errorf("unexpected argument %q (flags: --bin DIR, --plugins DIR, --keep, --machine NAME, --topology-file FILE)", fs.Arg(0))
	}
	if !slices.Contains(demoMachines(), opt.machine) {
		return opt, fmt.Errorf("--machine %q: choose one of %s", opt.machine, strings.Join(demoMachines(), ", "))
	}
	if opt.topologyFile != "" {
		abs, err := filepath.Abs(opt.topologyFile)
		if err != nil {
			return opt, err
		}
		opt.topologyFile = abs
	}
	return opt, nil
}

// checkSetup explains what is missing before anything is created.
func checkSetup(opt options) error {
	if os.Geteuid() != 0 {
		return errors.New("needs root: it creates network namespaces, veth and macvlan links (run `sudo make demo`)")
	}
	for _, name := range []string{"raild", "rail"} {
		path := filepath.Join(opt.bin, name)
		if info, err := os.Stat(path); err != nil || info.IsDir() || info.Mode()&0o111 == 0 {
			return fmt.Errorf("--bin %s: no executable %s (run `make build` first, or point --bin at the built binaries)", opt.bin, name)
		}
	}
	return nil
}
