package chaos

import (
	"strings"
	"testing"
	"time"

	"github.com/railcni/rail/integration/harness"
	"github.com/railcni/rail/pkg/api"
)

// snapshotNode reads the node netns once it holds still: the kernel adds
// a new link's IPv6 routes asynchronously, later under load.
func snapshotNode(t testing.TB, f *fleet) harness.Snapshot {
	t.Helper()
	deadline := time.Now().Add(settle)
	prev, err := f.node.Snapshot()
	for err == nil {
		time.Sleep(settleStep)
		var s harness.Snapshot
		if s, err = f.node.Snapshot(); err != nil {
			break
		}
		diff := prev.Diff(s)
		if len(diff) == 0 {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("the node netns still changes %s after it was made:\n%s", settle, strings.Join(diff, "\n"))
		}
		prev = s
	}
	t.Fatalf("snapshot node netns: %v", err)
	return harness.Snapshot{}
}

func mustLeases(t testing.TB, f *fleet) []api.Lease {
	t.Helper()
	leases, err := f.node.Raild.Leases()
	if err != nil {
		t.Fatalf("raild leases: %v", err)
	}
	return leases
}

// tearDownAll deletes every pod still alive, removes the kept netns and
// runs CNI GC with nothing valid, as a drained node would.
func tearDownAll(t *testing.T, f *fleet, b *book) {
	t.Helper()
	for _, rec := range b.liveRecs() {
		if err := f.del(rec.spec, rec.pod); err != nil {
			t.Errorf("final DEL of %s (%s): %v", rec.spec.name, rec.spec.kind.name, err)
		}
		if err := f.node.DeletePodNetns(rec.pod); err != nil {
			t.Errorf("remove netns of %s: %v", rec.spec.name, err)
		}
	}
	for _, rec := range b.takeZombies() {
		if err := f.node.DeletePodNetns(rec.pod); err != nil {
			t.Errorf("remove netns of %s: %v", rec.spec.name, err)
		}
	}
	if err := f.gc(nil); err != nil {
		t.Error(err)
	}
}

// leaks is what a run left behind on the node, by kind.
type leaks struct {
	links, addrs, routes, rules, leases, netns int
	nics                                       []string // stand-ins not home as they were
	diff                                       []string
}

func (l leaks) total() int {
	return l.links + l.addrs + l.routes + l.rules + l.leases + l.netns + len(l.nics)
}

// findLeaks compares the node netns with before (waiting briefly for the
// kernel), and counts leases, pod netns and stand-ins not home.
func findLeaks(t testing.TB, f *fleet, before harness.Snapshot) leaks {
	t.Helper()
	diff, err := harness.WaitSame(f.node.Netns, before, settle)
	if err != nil {
		t.Fatalf("snapshot node netns: %v", err)
	}
	l := leaks{diff: diff, nics: f.node.Fabric.Present(), leases: len(mustLeases(t, f))}
	counters := map[string]*int{"link": &l.links, "addr": &l.addrs, "route": &l.routes, "rule": &l.rules}
	for _, line := range diff {
		word, _, _ := strings.Cut(strings.TrimLeft(line, "+- "), " ")
		if n, ok := counters[word]; ok {
			*n++
		}
	}
	left, err := f.node.PodNetnsLeft()
	if err != nil {
		t.Fatal(err)
	}
	l.netns = len(left)
	return l
}

// requireClean fails unless the node is as before: netns unchanged, every
// NIC home, no lease, no pod netns.
func requireClean(t *testing.T, f *fleet, before harness.Snapshot) {
	t.Helper()
	l := findLeaks(t, f, before)
	if l.total() == 0 {
		return
	}
	t.Errorf("left behind: %d links, %d addresses, %d routes, %d rules, %d leases, %d pod netns\n%s\n%s",
		l.links, l.addrs, l.routes, l.rules, l.leases, l.netns, strings.Join(l.diff, "\n"), strings.Join(l.nics, "\n"))
}
