package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/railcni/rail/integration/harness"
	"github.com/railcni/rail/ipam"
	"github.com/railcni/rail/pkg/api"
)

// vfBench is the VF scenario: on a machine with a real SR-IOV PF (the
// SR-IOV rig's guest), rail in vf mode against upstream on the same VFs,
// with raild on the machine's own sysfs and every plugin exec'd in the
// machine's netns, as a node runs them.
type vfBench struct {
	pf       vfPF
	dir      string
	raild    *harness.Raild
	pods     []*harness.Pod
	rail     side
	base     side // the A/B's other rail build (nil: none)
	upstream side
	exec     side
	floor    *vfFloor
	write    *writeFloor
	up       upstreamVF
	before   map[int]string // the VFs before any ADD
}

// runVF sets the VF scenario up on opt.vf's VFs, measures, checks for
// leaks and prints the table. The error is non-nil only for a failure or
// a leak, never for a time.
func runVF(ctx context.Context, opt options, out, log io.Writer) (retErr error) {
	if err := checkSetup(opt); err != nil {
		return err
	}
	if opt.vfRDMA == "" {
		return errors.New("--vf needs --vf-rdma: the RDMA device on the PF that rail's netconf selects (nics), e.g. --vf-rdma rxe0")
	}
	pf, err := readPF("/sys", opt.vf)
	if err != nil {
		return err
	}
	opt.bursts = vfBursts(opt.bursts, len(pf.vfs))
	bins, upstream, cleanup, err := prepareBins(opt, log)
	if err != nil {
		return err
	}
	defer cleanup()
	up := upstreamVF{sriovCNI: opt.sriovCNI}
	if err := linkPlugin("--sriov-cni", up.sriovCNI, bins.Plugins, "sriov"); err != nil {
		return err
	}
	if err := linkPlugin("--rail-base", opt.railBase, bins.Plugins, railBasePlugin); err != nil {
		return err
	}
	if up.sriovCNI == "" {
		fmt.Fprintln(log, "rail-bench: no sriov-cni binary (--sriov-cni or SRIOV_CNI): comparing rail vf with host-device + static, "+
			"which moves the VF by PCI address but sets nothing through the PF")
	}
	b := &vfBench{pf: pf, up: up}
	defer func() {
		if retErr != nil && b.raild != nil {
			retErr = fmt.Errorf("%w\nraild's log (last lines):\n%s", retErr, b.raild.LogTail(30))
		}
		retErr = errors.Join(retErr, b.close())
	}()
	if err := b.setUp(bins, opt); err != nil {
		return err
	}
	sides := []side{b.rail, b.upstream, b.exec, b.floor, b.write}
	if b.base != nil {
		sides = append(sides, b.base)
	}
	m := newMeasurer(sides)
	fds, t, err := timed(log, func() ([]string, error) { return b.measure(ctx, m, opt, log) })
	if err != nil {
		return err
	}
	leaks, err := b.leaks(fds)
	if err != nil {
		return fmt.Errorf("leak check: %w", err)
	}
	b.print(out, m, opt)
	fmt.Fprintf(out, "\n%s\n", b.settings(opt, filepath.Base(upstream), t.took, t.loadBefore, t.loadAfter, leaks))
	if len(leaks) > 0 {
		return fmt.Errorf("%d leak(s):\n  %s", len(leaks), strings.Join(leaks, "\n  "))
	}
	return nil
}

// vfBursts keeps the burst sizes the PF's VFs can hold (every pod of a
// burst takes a VF), or bursts of all of them when none fits.
func vfBursts(sizes []int, vfs int) []int {
	var out []int
	for _, n := range sizes {
		if n <= vfs {
			out = append(out, n)
		}
	}
	if len(out) == 0 {
		return []int{vfs}
	}
	return out
}

// setUp starts raild on the machine's sysfs, makes one pod per VF, the
// sides and the floor, and records the VFs as they are.
func (b *vfBench) setUp(bins harness.Bins, opt options) error {
	var err error
	if b.before, err = vfStates(b.pf); err != nil {
		return err
	}
	wasUp, err := upVFs(b.pf)
	if err != nil {
		return err
	}
	if b.dir, err = os.MkdirTemp("", "rail-bench-vf-"); err != nil {
		return err
	}
	runID, err := randomID()
	if err != nil {
		return err
	}
	b.raild, err = harness.StartRaild(harness.RaildOptions{Bin: filepath.Join(bins.Rail, "raild"), Dir: b.dir, Root: "/",
		NodeName: "rail-bench-vf", Config: harness.DaemonConfig{Cooldown: "0s",
			Pools: []ipam.PoolConfig{{Name: "vf", Subnet: vfPoolSubnet}}}})
	if err != nil {
		return fmt.Errorf("start raild on this machine's sysfs: %w", err)
	}
	for i := range b.pf.vfs {
		netns, err := harness.CreateNetNS(fmt.Sprintf("%svf-%s-p%d", namePrefix, runID, i))
		if err != nil {
			return err
		}
		b.pods = append(b.pods, &harness.Pod{Namespace: "default", Name: fmt.Sprintf("p%d", i), UID: runID + fmt.Sprint(i),
			IfName: "net1", Annotations: map[string]string{api.AnnotationAttach: "true"}, Netns: netns})
	}
	sb := &vfSideBuilder{sideBuilder: sideBuilder{pods: b.pods, ids: &idSource{run: runID}},
		cni: harness.NewHostCNI([]string{bins.Rail, bins.Plugins}, filepath.Join(b.dir, "cni-cache"), os.Stderr),
		dir: b.dir, pf: b.pf, settings: benchVFSettings()}
	rail := sb.rail("rail", b.raild.Socket, opt.vfRDMA)
	if opt.railBase != "" {
		b.base = sb.rail(railBasePlugin, b.raild.Socket, opt.vfRDMA)
	}
	upstream := sb.upstream(b.up)
	upstream.restore = setUpAsBefore(b.pf, wasUp)
	exec := sb.side(sb.network("noop", map[string]any{"type": noopPlugin}))
	exec.ifaces = nil
	if sb.err != nil {
		return sb.err
	}
	b.rail, b.upstream, b.exec = rail, upstream, exec
	// the floor works on the last VF: bursts fill the first ones
	if b.floor, err = newVFFloor(runID, b.pf.name, b.pf.vfs[len(b.pf.vfs)-1], benchVFSettings()); err != nil {
		return err
	}
	b.write, err = newWriteFloor(b.dir, b.raild.StateDir())
	return err
}

func randomID() (string, error) {
	buf := make([]byte, 3)
	if _, err := rand.Read(buf); err != nil {
		return "", fmt.Errorf("random id: %w", err)
	}
	return hex.EncodeToString(buf), nil
}

// measure verifies the sides, warms up, then runs the measured rounds, the
// bursts and raild's CPU windows; it returns raild's open files after the
// warm-up.
func (b *vfBench) measure(ctx context.Context, m *measurer, opt options, log io.Writer) ([]string, error) {
	fmt.Fprintf(log, "rail-bench: VF scenario on %s (%d VFs): %d warm-up and %d measured rounds, then bursts of %s pods (×%d)...\n",
		b.pf.name, len(b.pf.vfs), opt.warmup, opt.rounds, joinInts(opt.bursts), opt.burstReps)
	return m.all(ctx, opt, b.raild.PID(), m.sides, []side{b.upstream, b.rail}, log)
}

// leaks lists what the run left: links in pods, VFs not as they were
// (PF-side settings, netdev name, MTU, MAC, state, alias), raild's leases
// and open files, host-local reservations, CNI cache entries, the floor's
// VF not home.
func (b *vfBench) leaks(raildFDs []string) ([]string, error) {
	var leaks []string
	for _, pod := range b.pods {
		left, err := podLinksLeft(pod)
		if err != nil {
			return nil, err
		}
		leaks = append(leaks, left...)
	}
	diff, err := vfChanges(b.pf, b.before)
	if err != nil {
		return nil, err
	}
	leaks = append(leaks, diff...)
	leases, err := b.raild.Leases()
	if err != nil {
		return nil, err
	}
	for _, l := range leases {
		leaks = append(leaks, fmt.Sprintf("raild lease left: sandbox %s interface %s address %s", l.Sandbox, l.IfName, l.Address))
	}
	base := baseline{raildFDs: harness.FDCounts(raildFDs)}
	files := []func() ([]string, error){
		leakCheck{node: &harness.Node{Raild: b.raild, Dir: b.dir}, base: base}.raildFiles,
		leakCheck{node: &harness.Node{Dir: b.dir}}.hostLocal,
		leakCheck{node: &harness.Node{Dir: b.dir}}.cniCache,
	}
	for _, step := range files {
		found, err := step()
		if err != nil {
			return nil, err
		}
		leaks = append(leaks, found...)
	}
	return append(leaks, b.floor.leftover()...), nil
}

// sideCount is how many sides the rounds rotate.
func (b *vfBench) sideCount() int {
	if b.base != nil {
		return 6
	}
	return 5
}

func (b *vfBench) close() error {
	var errs []error
	if b.write != nil {
		errs = append(errs, b.write.close())
	}
	if b.floor != nil {
		errs = append(errs, b.floor.close())
	}
	for _, pod := range b.pods {
		errs = append(errs, pod.Netns.Delete())
	}
	if b.raild != nil {
		errs = append(errs, b.raild.Stop())
	}
	if b.dir != "" {
		errs = append(errs, os.RemoveAll(b.dir))
	}
	return errors.Join(errs...)
}

// print writes the table: rail vf against upstream, the exec floor, vf
// mode's kernel floor and the write floor.
func (b *vfBench) print(out io.Writer, m *measurer, opt options) {
	exec := summarize(m.records[b.exec])
	floor := summarize(m.records[b.floor])
	write := summarize(m.records[b.write])
	c := comparison{name: "rail vf vs " + b.up.name(), rail: summarize(m.records[b.rail]),
		upstream: summarize(m.records[b.upstream]), floor: exec, kernel: &floor, write: &write}
	windows := []raildWindow{m.records[b.rail].raild.seq, m.records[b.rail].raild.burst,
		m.records[b.upstream].raild.seq, m.records[b.upstream].raild.burst}
	mean, highest := idleRate(windows)
	comps := []comparison{c}
	if b.base != nil {
		comps = append(comps, comparison{name: "rail vf of --rail-base (A/B) vs " + b.up.name(), rail: summarize(m.records[b.base]),
			upstream: c.upstream, floor: exec, kernel: &floor, write: &write})
	}
	writeTable(out, comps, opt.bursts, floorSet{exec: exec, write: &write, kernel: []kernelFloor{{
		each: "VF read and set through the PF (mac, vlan/qos, spoofchk, rate, trust), then its netdev into a netns / back, then reset through the PF",
		both: "VF configured, moved and back, reset", f: floor}}}, []time.Duration{mean, highest})
}

// settings says how the figures were made, under the table.
func (b *vfBench) settings(opt options, upstreamPlugins string, took time.Duration, loadBefore, loadAfter string, leaks []string) string {
	s := benchVFSettings()
	upstream := "sriov-cni (" + filepath.Base(filepath.Dir(b.up.sriovCNI)) + ") + host-local (" + upstreamPlugins + ")"
	if b.up.sriovCNI == "" {
		upstream = "host-device + static (" + upstreamPlugins + "; no sriov-cni binary given: nothing set through the PF on that side)"
	}
	setBy := "both sides set"
	if b.up.sriovCNI == "" {
		setBy = "rail sets"
	}
	lines := []string{
		fmt.Sprintf("%d rounds of sequential ADD+DEL per side after %d warm-up, the %d sides rotated each round; bursts: "+
			"the fastest of %d per size and phase; raild's CPU in windows of its own for rail and upstream, as in the simulated "+
			"node's table (none for a --rail-base build: its raild figures read 0).",
			opt.rounds, opt.warmup, b.sideCount(), opt.burstReps),
		fmt.Sprintf("PF %s (%s) with %d VFs; %s vlan %d qos %d, spoofchk %v, trust %v, max_tx_rate %d and an admin MAC "+
			"through the PF; rail vf places by --vf-rdma %s (raild on this machine's sysfs); upstream: %s, each pod's VF by its PCI address "+
			"(deviceID / pciBusID). The kernel floor works on VF %d with the same settings.",
			b.pf.name, b.pf.pci, len(b.pf.vfs), setBy, s.vlan, s.qos, s.spoofchk, s.trust, s.maxTxRate, opt.vfRDMA, upstream,
			b.floor.vf.index),
		fmt.Sprintf("Machine: %s, %d CPUs, %s; load average %s before, %s after; %s.",
			kernelRelease(), runtime.NumCPU(), runtime.Version(), loadBefore, loadAfter, took.Round(time.Second)),
	}
	if len(leaks) == 0 {
		lines = append(lines, "Leaks: none (pod links, VFs' PF-side settings and netdevs, raild leases and open files, "+
			"host-local reservations, CNI cache).")
	} else {
		lines = append(lines, fmt.Sprintf("Leaks: %d (listed on stderr).", len(leaks)))
	}
	return strings.Join(lines, "\n")
}
