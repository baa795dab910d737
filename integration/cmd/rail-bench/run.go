package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/railcni/rail/integration/harness"
)

// run sets the node up, measures, checks for leaks and prints the table.
// The error is non-nil only for a failure or a leak, never for a time.
func run(ctx context.Context, opt options, out, log io.Writer) (retErr error) {
	if opt.vf != "" {
		return runVF(ctx, opt, out, log)
	}
	if err := checkSetup(opt); err != nil {
		return err
	}
	bins, upstream, cleanup, err := prepareBins(opt, log)
	if err != nil {
		return err
	}
	defer cleanup()
	maxPods := slices.Max(opt.bursts)
	node, err := newBenchNode(bins, maxPods)
	if err != nil {
		return err
	}
	defer func() { retErr = errors.Join(retErr, node.Close()) }()
	kernel, err := newKernelFloors(strings.TrimPrefix(node.ID, namePrefix+"-"))
	if err != nil {
		return err
	}
	defer func() { retErr = errors.Join(retErr, kernel.close()) }()
	write, err := newWriteFloor(node.Dir, node.Raild.StateDir())
	if err != nil {
		return err
	}
	defer func() { retErr = errors.Join(retErr, write.close()) }()
	b, err := newBench(node, kernel, write, maxPods)
	if err != nil {
		return err
	}
	b.upstream = filepath.Base(upstream)
	return b.run(ctx, opt, out, log)
}

// bench is one run on one node.
type bench struct {
	node     *harness.Node
	pods     []*harness.Pod
	sides    sideSet
	before   harness.Snapshot
	upstream string // what the upstream plugins are (their cache dir's name)
}

// newBench snapshots the node, then makes the pods and the networks.
func newBench(node *harness.Node, kernel *kernelFloors, write *writeFloor, pods int) (*bench, error) {
	before, err := node.Snapshot()
	if err != nil {
		return nil, err
	}
	b := &bench{node: node, before: before, sides: sideSet{kernel: kernel, write: write}}
	for i := range pods {
		pod, err := node.NewPod("default", fmt.Sprintf("p%d", i), podAnnotations())
		if err != nil {
			return nil, err
		}
		b.pods = append(b.pods, pod)
	}
	ids := &idSource{run: node.ID}
	b.sides.scenarios, b.sides.execFloor, err = buildSides(node, b.pods, ids, kernel)
	return b, err
}

func (b *bench) run(ctx context.Context, opt options, out, log io.Writer) error {
	m := newMeasurer(b.sides.all())
	fds, t, err := timed(log, func() ([]string, error) { return b.measure(ctx, m, opt, log) })
	if err != nil {
		return err
	}
	leaks, err := leakCheck{node: b.node, pods: b.pods, kernel: b.sides.kernel,
		base: baseline{node: b.before, raildFDs: harness.FDCounts(fds)}}.run()
	if err != nil {
		return fmt.Errorf("leak check: %w", err)
	}
	b.print(out, m, opt)
	fmt.Fprintf(out, "\n%s\n", b.settings(opt, t.took, t.loadBefore, t.loadAfter, leaks))
	if len(leaks) > 0 {
		return fmt.Errorf("%d leak(s):\n  %s", len(leaks), strings.Join(leaks, "\n  "))
	}
	return nil
}

// runSpan is how long the measuring took and the machine's load before and
// after.
type runSpan struct {
	took                  time.Duration
	loadBefore, loadAfter string
}

// timed runs measure and says how long it took (on log too).
func timed(log io.Writer, measure func() ([]string, error)) ([]string, runSpan, error) {
	started, load := time.Now(), loadAverage()
	fds, err := measure()
	if err != nil {
		return nil, runSpan{}, err
	}
	t := runSpan{took: time.Since(started), loadBefore: load, loadAfter: loadAverage()}
	fmt.Fprintf(log, "rail-bench: measured in %s; checking for leaks...\n", t.took.Round(time.Second))
	return fds, t, nil
}

// measure verifies the sides, warms up, then runs the measured rounds, the
// bursts and raild's CPU windows. It returns raild's open files after the
// warm-up.
func (b *bench) measure(ctx context.Context, m *measurer, opt options, log io.Writer) ([]string, error) {
	fmt.Fprintf(log, "rail-bench: %d warm-up and %d measured rounds over %d sides, then bursts of %s pods (×%d)...\n",
		opt.warmup, opt.rounds, len(b.sides.all()), joinInts(opt.bursts), opt.burstReps)
	var windows []side
	for _, sc := range b.sides.scenarios {
		windows = append(windows, sc.upstream, sc.rail)
	}
	return m.all(ctx, opt, b.node.Raild.PID(), b.sides.all(), windows, log)
}

// all verifies the sides that give pods interfaces, warms up, then runs
// the measured rounds, the bursts and raild's CPU windows of windows. It
// returns raild's open files after the warm-up.
func (m *measurer) all(ctx context.Context, opt options, raild int, verify, windows []side, log io.Writer) ([]string, error) {
	if err := verifyAttachments(ctx, verify); err != nil {
		return nil, err
	}
	if err := m.rounds(ctx, opt.warmup, false); err != nil {
		return nil, fmt.Errorf("warm-up: %w", err)
	}
	fds, err := harness.OpenFDs(raild)
	if err != nil {
		return nil, err
	}
	if err := m.rounds(ctx, opt.rounds, true); err != nil {
		return nil, fmt.Errorf("sequential rounds: %w", err)
	}
	fmt.Fprintln(log, "rail-bench: sequential rounds done; bursts...")
	if err := m.bursts(ctx, opt.bursts, opt.burstReps); err != nil {
		return nil, err
	}
	if err := m.raildWindows(ctx, raild, windows, opt.rounds, slices.Max(opt.bursts), raildTiming(), log); err != nil {
		return nil, fmt.Errorf("raild's CPU windows: %w", err)
	}
	return fds, nil
}

// print writes the table from what the measurer recorded.
func (b *bench) print(out io.Writer, m *measurer, opt options) {
	exec := summarize(m.records[b.sides.execFloor])
	write := summarize(m.records[b.sides.write])
	var comps []comparison
	var windows []raildWindow
	for _, sc := range b.sides.scenarios {
		for _, s := range []side{sc.upstream, sc.rail} {
			windows = append(windows, m.records[s].raild.seq, m.records[s].raild.burst)
		}
		c := comparison{name: sc.name, rail: summarize(m.records[sc.rail]),
			upstream: summarize(m.records[sc.upstream]), floor: exec, write: &write}
		if sc.kernel != nil {
			k := summarize(m.records[sc.kernel])
			c.kernel = &k
		}
		comps = append(comps, c)
	}
	mean, highest := idleRate(windows)
	writeTable(out, comps, opt.bursts, floorSet{exec: exec, write: &write, kernel: []kernelFloor{
		{each: "one netdev into a netns / back (one netlink message each)", both: "into and back",
			f: summarize(m.records[b.sides.kernel.move])},
		{each: "one macvlan created into a netns / found and deleted there", both: "macvlan created and deleted",
			f: summarize(m.records[b.sides.kernel.macvlan])},
	}}, []time.Duration{mean, highest})
}
