package chaos

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/railcni/rail/integration/harness"
)

// warmCycles run before the baseline is read, so the first connections,
// caches and bbolt pages are not counted as leaks or growth.
const warmCycles = 3

// rssSlackKiB is how much raild's resident memory may grow over the soak
// (on top of doubling) before it counts as not flat.
const rssSlackKiB = 16 << 10

// TestSoak runs scale.cycles pod lifecycles (new netns, ADD, DEL, netns
// removed) on parallel workers, mixed across move, macvlan and rail-ipam
// and both pools, then requires nothing leaked: links, addresses, routes
// and rules of the node netns, leases, pod netns, raild's open files; and
// reports raild's resident memory at start and end.
func TestSoak(t *testing.T) {
	sc, seed := runScale(t), runSeed(t)
	f := newFleet(t)
	before := snapshotNode(t, f)
	for i, k := range f.kinds {
		for n := range warmCycles {
			spec := podSpec{name: fmt.Sprintf("warm%d-%d", i, n), kind: k, pool: pools[n%len(pools)].Name, gpu: k.gpus[0]}
			if k.exclusive && !f.takeMoveSlot() {
				t.Fatal("no move slot free before the soak")
			}
			if err := soakCycle(f, spec); err != nil {
				t.Fatalf("warm-up: %v", err)
			}
		}
	}
	pid := f.node.Raild.PID()
	fds := mustFDs(t, pid)
	rssStart := mustRSS(t, pid)
	t.Logf("seed %d: %d ADD/DEL cycles on %d workers", seed, sc.cycles, sc.workers)
	started := time.Now()
	perKind := runSoak(t, f, sc, seed)
	elapsed := time.Since(started)
	if t.Failed() {
		return
	}
	l := findLeaks(t, f, before)
	fdsLeaked := fdsLeaked(t, pid, fds)
	rssEnd := mustRSS(t, pid)
	t.Logf("soak: %d cycles (%s) in %s, %s per cycle; leaked: links %d, addresses %d, routes %d, rules %d, leases %d, pod netns %d, fds %d; "+
		"raild RSS start %.1f MiB, end %.1f MiB",
		sc.cycles, perKind, elapsed.Round(time.Second), (elapsed / time.Duration(sc.cycles)).Round(time.Millisecond),
		l.links, l.addrs, l.routes, l.rules, l.leases, l.netns, fdsLeaked, float64(rssStart)/1024, float64(rssEnd)/1024)
	if l.total() > 0 || fdsLeaked > 0 {
		t.Errorf("the soak leaked:\n%s\n%s", strings.Join(l.diff, "\n"), strings.Join(l.nics, "\n"))
	}
	if rssEnd > 2*rssStart+rssSlackKiB {
		t.Errorf("raild RSS grew from %d KiB to %d KiB over %d cycles: not flat", rssStart, rssEnd, sc.cycles)
	}
}

// runSoak runs the cycles and returns how many each kind got.
func runSoak(t *testing.T, f *fleet, sc scale, seed uint64) string {
	var next atomic.Int64
	counts := make([]atomic.Int64, len(f.kinds))
	var wg sync.WaitGroup
	for w := range sc.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(w)+1))
			for n := next.Add(1); n <= int64(sc.cycles) && !t.Failed(); n = next.Add(1) {
				spec := f.pickSpec(rng, fmt.Sprintf("s%d", n))
				if err := soakCycle(f, spec); err != nil {
					t.Errorf("cycle %d: %v", n, err)
				}
				counts[kindIndex(f, spec.kind)].Add(1)
				if n%max(1, int64(sc.cycles/10)) == 0 {
					logProgress(t, f, n)
				}
			}
		}()
	}
	wg.Wait()
	parts := make([]string, len(f.kinds))
	for i, k := range f.kinds {
		parts[i] = fmt.Sprintf("%s %d", k.name, counts[i].Load())
	}
	return strings.Join(parts, ", ")
}

// logProgress prints how far the soak is and raild's RSS there, so a
// long run shows whether memory stays flat.
func logProgress(t *testing.T, f *fleet, done int64) {
	kib, err := harness.ProcStatusKiB(f.node.Raild.PID(), "VmRSS")
	if err != nil {
		t.Errorf("raild RSS: %v", err)
		return
	}
	t.Logf("%d cycles done; raild RSS %.1f MiB", done, float64(kib)/1024)
}

func kindIndex(f *fleet, k *kind) int {
	for i, other := range f.kinds {
		if other == k {
			return i
		}
	}
	return -1
}

// soakCycle is one pod's life: sandbox, ADD, DEL, netns removed.
func soakCycle(f *fleet, spec podSpec) error {
	defer f.done(spec)
	pod, err := f.newSandbox(spec)
	if err != nil {
		return err
	}
	_, addErr := f.add(spec, pod)
	if addErr != nil {
		addErr = fmt.Errorf("ADD of %s (%s, pool %s): %w", spec.name, spec.kind.name, spec.pool, addErr)
	}
	if err := f.del(spec, pod); err != nil {
		return fmt.Errorf("DEL of %s (%s): %w (ADD: %v)", spec.name, spec.kind.name, err, addErr)
	}
	if err := f.node.DeletePodNetns(pod); err != nil {
		return err
	}
	return addErr
}

func mustFDs(t testing.TB, pid int) []string {
	t.Helper()
	fds, err := harness.OpenFDs(pid)
	if err != nil {
		t.Fatal(err)
	}
	return fds
}

func mustRSS(t testing.TB, pid int) int {
	t.Helper()
	kib, err := harness.ProcStatusKiB(pid, "VmRSS")
	if err != nil {
		t.Fatal(err)
	}
	return kib
}

// fdsLeaked counts raild's open files beyond baseline, kind by kind,
// waiting briefly for it to close connections the last plugins left.
func fdsLeaked(t testing.TB, pid int, baseline []string) int {
	t.Helper()
	want := harness.FDCounts(baseline)
	deadline := time.Now().Add(settle)
	for {
		extra := 0
		for kind, n := range harness.FDCounts(mustFDs(t, pid)) {
			extra += max(0, n-want[kind])
		}
		if extra == 0 || time.Now().After(deadline) {
			return extra
		}
		time.Sleep(20 * time.Millisecond)
	}
}
