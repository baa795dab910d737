// Command rail-demo is `make demo`: on this machine, as root, with nothing
// but Go, it simulates an 8×H100 node with 4 ConnectX-7 NICs inside network
// namespaces, runs raild with a kubelet stand-in that says which pod holds
// which GPUs, creates a "prefill" pod (GPUs 0,1) and a "decode" pod (GPUs
// 4,5) through the real CNI chain ptp → rail, shows which NIC each got and
// why, has them talk over the rail, tears everything down and shows that
// nothing is left.
//
//	go run ./integration/cmd/rail-demo --bin bin [--keep]
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
	"syscall"
)

type options struct {
	bin     string
	plugins string
	keep    bool
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
	if err := fs.Parse(args); err != nil {
		return opt, err
	}
	if fs.NArg() > 0 {
		return opt, fmt.Errorf("unexpected argument %q (flags: --bin DIR, --plugins DIR, --keep)", fs.Arg(0))
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
