// Command rail-bench is `make bench`: in one run, through libcni, on a
// simulated GPU node in network namespaces (the integration harness), it
// measures rail against the upstream reference plugins doing the same job,
// side by side and alternated round by round so load drift hits every side
// alike:
//
//   - rail move            vs host-device + static IPAM
//   - rail macvlan         vs macvlan + host-local
//   - ptp + rail (chained) vs ptp, then macvlan as a second network
//
// For each: sequential ADD, DEL and ADD+DEL (p50/p99), bursts of
// concurrent pods (wall time of all ADDs, then all DELs), and CPU per
// ADD+DEL: user+sys of the plugin processes plus raild's own CPU, measured
// in nanoseconds in windows of each side's pods of their own, less raild's
// CPU with nothing happening (windows.go) — for the upstream sides too:
// what pods raild does not serve cost it.
// Beside them the exec floor (a no-op plugin through libcni) and the
// kernel floor of each mode (one netdev into a netns and back, one
// netlink message each way; one macvlan created into a netns, then found
// and deleted there), so rail's ADD and DEL are also set against exec +
// kernel of their mode. It prints one markdown table with every rail
// figure as a ratio to its upstream counterpart and to the floor. It
// exits non-zero on an error or
// a leak (links, addresses, routes, rules, leases, netns, raild's open
// files, host-local reservations, CNI cache), never on a time.
//
//	go run ./integration/cmd/rail-bench --bin bin [--quick] [--rounds N] [--bursts 50,100] [--burst-reps N]
//
// With --vf PF (make bench-sriov, in the SR-IOV rig's guest) it measures
// instead rail in vf mode against sriov-cni + host-local (--sriov-cni, or
// host-device + static without one) on that real PF's VFs, with the exec
// floor and vf mode's kernel floor (the PF calls and one VF move).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
)

// options say what to measure and with which binaries.
type options struct {
	bin       string // raild, rail (make build)
	plugins   string // upstream CNI plugins; "" builds them once into the cache
	rounds    int    // sequential ADD+DEL rounds per side
	bursts    []int  // concurrent pods per burst
	burstReps int    // bursts of each size per side
	warmup    int    // rounds run first and not counted
	// The VF scenario (vf.go), on this machine's real PF instead of the
	// simulated node: the PF's netdev ("": the simulated node), the RDMA
	// device on it that rail's netconf selects, and the sriov-cni binary
	// ("": host-device + static instead).
	vf, vfRDMA, sriovCNI string
	// railBase is a rail plugin from another build, measured in the VF
	// scenario as a side of its own beside this tree's (an A/B in one
	// run; "": none).
	railBase string
}

// fullSettings are make bench's: within about five minutes on a loaded
// 2-core machine.
func fullSettings() options {
	return options{rounds: 100, bursts: []int{50, 100}, burstReps: 2, warmup: 3}
}

// quickSettings only prove that every path works (make test).
func quickSettings() options {
	return options{rounds: 4, bursts: []int{3, 5}, burstReps: 1, warmup: 1}
}

func main() {
	opt, err := parseFlags(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "rail-bench: %v\n", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, opt, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintf(os.Stderr, "rail-bench: %v\n", err)
		stop()
		os.Exit(1)
	}
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	fs := flag.NewFlagSet("rail-bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	full, quickOpt := fullSettings(), quickSettings()
	opt := full
	quick := fs.Bool("quick", false, "few iterations and small bursts: proves the bench works, figures mean little")
	fs.StringVar(&opt.bin, "bin", "bin", "directory with raild and rail (make build)")
	fs.StringVar(&opt.vf, "vf", "", "run the VF scenario on this PF's VFs (its netdev, e.g. pf0) instead of the simulated node: rail vf vs sriov-cni (or host-device)")
	fs.StringVar(&opt.vfRDMA, "vf-rdma", "", "with --vf: the RDMA device on the PF that rail's netconf selects (e.g. rxe0)")
	fs.StringVar(&opt.sriovCNI, "sriov-cni", os.Getenv("SRIOV_CNI"), "with --vf: the sriov-cni binary (default $SRIOV_CNI; none: host-device + static, said so)")
	fs.StringVar(&opt.railBase, "rail-base", "", "with --vf: a rail plugin binary of another build, measured beside this one in the same run (A/B)")
	fs.StringVar(&opt.plugins, "plugins", "", "directory with the upstream CNI plugins (default: built once from the Go module cache)")
	rounds := fs.Int("rounds", 0, fmt.Sprintf("sequential ADD+DEL rounds per side (default %d, quick %d)", full.rounds, quickOpt.rounds))
	bursts := fs.String("bursts", "", fmt.Sprintf("burst sizes, comma-separated (default %s, quick %s)", joinInts(full.bursts), joinInts(quickOpt.bursts)))
	reps := fs.Int("burst-reps", 0, fmt.Sprintf("bursts of each size per side; the table shows the fastest (default %d, quick %d)", full.burstReps, quickOpt.burstReps))
	if err := fs.Parse(args); err != nil {
		return opt, err
	}
	if fs.NArg() > 0 {
		return opt, fmt.Errorf("unexpected argument %q (flags: --bin DIR, --plugins DIR, --quick, --rounds N, --bursts LIST, --burst-reps N, --vf PF, --vf-rdma DEV, --sriov-cni BIN)", fs.Arg(0))
	}
	if *quick {
		opt.rounds, opt.bursts, opt.burstReps, opt.warmup = quickOpt.rounds, quickOpt.bursts, quickOpt.burstReps, quickOpt.warmup
	}
	return applyOverrides(opt, *rounds, *bursts, *reps)
}

// applyOverrides checks and applies --rounds, --bursts and --burst-reps
// when given (0 and "" keep the mode's setting).
func applyOverrides(opt options, rounds int, bursts string, reps int) (options, error) {
	if rounds < 0 || reps < 0 {
		return opt, errors.New("--rounds and --burst-reps must be positive (e.g. --rounds 100 --burst-reps 3)")
	}
	if rounds > 0 {
		opt.rounds = rounds
	}
	if reps > 0 {
		opt.burstReps = reps
	}
	if bursts != "" {
		sizes, err := parseSizes(bursts)
		if err != nil {
			return opt, err
		}
		opt.bursts = sizes
	}
	return opt, nil
}

// maxBurst bounds a burst: every pod of a move burst takes its own NIC,
// and the simulated node has one VF per pod plus its PF.
const maxBurst = 200

func parseSizes(list string) ([]int, error) {
	var out []int
	for _, field := range strings.Split(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(field))
		if err != nil || n < 1 || n > maxBurst {
			return nil, fmt.Errorf("--bursts %q: %q is not a burst size: want pod counts from 1 to %d, e.g. --bursts 50,100", list, field, maxBurst)
		}
		out = append(out, n)
	}
	return out, nil
}

func joinInts(v []int) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = strconv.Itoa(x)
	}
	return strings.Join(parts, ",")
}
