// Command fake-kubelet serves the kubelet's PodResources API from a JSON
// file of pods, for `make demo` and end-to-end tests:
//
//	fake-kubelet --socket PATH --pods FILE
//
// FILE is a JSON array of pods:
//
//	[{"namespace":"default","name":"prefill",
//	  "containers":[{"name":"main","devices":{"nvidia.com/gpu":["GPU-…"]}}]}]
//
// A container's DRA claims, reported under dynamic_resources, go in
// "claims": [{"namespace","name","devices":[{"driver","pool","device","cdi":[…]}]}].
//
// SIGHUP reloads FILE (a bad file is reported and the previous pods stay);
// SIGTERM or SIGINT stops serving and removes the socket.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/railcni/rail/daemon/podinfo/podinfotest"
)

const defaultSocket = "/var/lib/kubelet/pod-resources/kubelet.sock"

// Exit codes.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

func main() {
	os.Exit(run(os.Args[1:], os.Stderr))
}

// options are the parsed command line.
type options struct {
	socket   string
	podsFile string
}

func run(args []string, stderr io.Writer) int {
	opts, err := parseArgs(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "fake-kubelet: %v\n", err)
		return exitUsage
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	pods, err := loadPods(opts.podsFile)
	if err != nil {
		log.Error("cannot load pods", "err", err)
		return exitError
	}
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGHUP, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(signals)

	server, err := podinfotest.Start(opts.socket, pods)
	if err != nil {
		log.Error("cannot serve", "err", err)
		return exitError
	}
	defer server.Stop()
	log.Info("serving pod resources", "socket", opts.socket, "pods", len(pods), "file", opts.podsFile)
	for sig := range signals {
		if sig != syscall.SIGHUP {
			log.Info("stopping", "signal", sig.String())
			return exitOK
		}
		reload(log, server, opts.podsFile)
	}
	return exitOK
}

func parseArgs(args []string, stderr io.Writer) (options, error) {
	var opts options
	flags := flag.NewFlagSet("fake-kubelet", flag.ContinueOnError)
	flags.SetOutput(stderr)
	flags.StringVar(&opts.socket, "socket", defaultSocket, "unix socket to serve the PodResources API on")
	flags.StringVar(&opts.podsFile, "pods", "", "JSON file with the pods and their devices (required)")
	if err := flags.Parse(args); err != nil {
		return opts, err
	}
	switch {
	case flags.NArg() > 0:
		return opts, fmt.Errorf("unexpected argument %q; use --socket PATH --pods FILE", flags.Arg(0))
	case opts.podsFile == "":
		return opts, errors.New("--pods is required: a JSON file such as " +
			`[{"namespace":"default","name":"prefill","containers":[{"name":"main","devices":{"nvidia.com/gpu":["0"]}}]}]`)
	case opts.socket == "":
		return opts, errors.New("--socket must not be empty")
	}
	return opts, nil
}

func reload(log *slog.Logger, server *podinfotest.Server, podsFile string) {
	pods, err := loadPods(podsFile)
	if err == nil {
		err = server.SetPods(pods)
	}
	if err != nil {
		log.Error("reload failed, keeping the previous pods", "file", podsFile, "err", err)
		return
	}
	log.Info("reloaded pods", "file", podsFile, "pods", len(pods))
}
