package chaos

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// progressTimeout bounds the wait for the churn to reach the next kill
// mark (a stuck plugin or raild fails the test with a message instead).
const progressTimeout = 10 * time.Minute

// TestChaos SIGKILLs raild at seeded random moments while workers start
// and tear down pods of every kind over both pools, and after each restart
// judges the node: no address leased twice, every live pod with its lease
// and its interface, every NIC no live pod holds back home under its own
// name, and CNI GC freeing the leases of pods torn down while raild was
// down. At the end every pod goes and the node must be as it was.
func TestChaos(t *testing.T) {
	sc, seed := runScale(t), runSeed(t)
	t.Logf("seed %d: %d SIGKILLs over %d pods, %d workers, %d pods alive at once (replay the schedule with RAIL_CHAOS_SEED=%d)",
		seed, sc.kills, sc.pods, sc.workers, sc.live, seed)
	f := newFleet(t)
	before := snapshotNode(t, f)
	rng := rand.New(rand.NewPCG(seed, 0))
	c := newChurn(t, f, sc)
	c.start(seed)
	defer c.halt()
	started := time.Now()
	for i, mark := range killMarks(rng, sc) {
		if !c.waitAnswered(mark, progressTimeout) {
			t.Fatalf("kill %d: the churn stopped or did not reach %d answered CNI calls within %s (at %d)",
				i+1, mark, progressTimeout, c.answered.Load())
		}
		c.killAndRecover(rng)
		t.Logf("kill %d/%d at %d answered CNI calls: judged %d live pods; %d pods started so far, %d stale leases freed by GC",
			i+1, sc.kills, mark, c.book.liveCount(), c.book.startedCount(), c.book.gcCount())
		if t.Failed() {
			t.Fatalf("after kill %d (seed %d): the node is not consistent (see above)", i+1, seed)
		}
	}
	if !c.waitAdded(sc.pods, progressTimeout) {
		t.Fatalf("only %d of %d pods started within %s after the last kill", c.book.startedCount(), sc.pods, progressTimeout)
	}
	c.halt()
	b := c.book
	t.Logf("chaos: %d pods started %v, %d torn down, %d ADDs failed with raild down and were retried, %d DELs answered with raild down, "+
		"%d DELs failed with raild down and were retried, %d SIGKILLs, %d stale leases freed by CNI GC, %d live leases judged, in %s",
		b.added, b.byKind, b.deleted, b.failedAdds, b.downDels, b.failedDels, sc.kills, b.freedByGC, b.checkedLeases,
		time.Since(started).Round(time.Second))
	if sc.kills > 0 && b.freedByGC == 0 {
		t.Errorf("no stale lease was left for CNI GC to free: the run proved nothing about GC")
	}
	c.retryDying()
	tearDownAll(t, f, b)
	requireClean(t, f, before)
}

// killMarks are the answered-call counts at which raild is killed: one in
// each of scale.kills equal spans of the expected calls, at a random point.
func killMarks(rng *rand.Rand, sc scale) []int64 {
	span := int64(2*sc.pods) / int64(sc.kills+1)
	marks := make([]int64, sc.kills)
	for i := range marks {
		marks[i] = int64(i+1)*span + rng.Int64N(span/2+1) - span/4
	}
	slices.Sort(marks)
	return marks
}

// killAndRecover SIGKILLs raild at a random moment, lets the workers run
// into the dead socket, tears one pod down itself while raild is down
// (keeping its netns until raild is back), then quiesces the node,
// restarts raild, removes the kept netns, runs CNI GC and judges.
func (c *churn) killAndRecover(rng *rand.Rand) {
	t := c.t
	time.Sleep(time.Duration(rng.IntN(20_000)) * time.Microsecond)
	// Down before the signal: a call that fails from the kill on must not
	// look as if raild was up all along.
	c.epoch.Add(1)
	if err := c.fleet.node.Raild.Kill(); err != nil {
		t.Fatal(err)
	}
	c.waitAnswered(c.answered.Load()+1+rng.Int64N(int64(2*c.scale.workers)), progressTimeout)
	c.gate.RLock()
	if rec := c.book.takeVictim(rng, gcReaches); rec != nil {
		c.teardownZombie(rec)
	}
	c.gate.RUnlock()
	c.gate.Lock()
	defer c.gate.Unlock()
	if err := c.fleet.node.Raild.Start(); err != nil {
		t.Fatalf("restart raild: %v", err)
	}
	c.epoch.Add(1)
	c.judgeRestart()
}

func gcReaches(k *kind) bool { return k.gcReaches }

// teardownZombie is a DEL while raild is down whose netns stays.
func (c *churn) teardownZombie(rec *podRec) {
	err := c.fleet.del(rec.spec, rec.pod)
	c.answered.Add(1)
	if err != nil {
		c.delFailed(rec, false, err)
		return
	}
	c.book.deletedPod(rec, true, true)
}

// judgeRestart runs with the node quiet: DELs that failed while raild was
// down retried, leases as raild came back, then the kept netns removed and
// CNI GC, then leases, pods and NICs exactly.
func (c *churn) judgeRestart() {
	t := c.t
	c.retryDying()
	live := c.book.liveRecs()
	errs, strays := judgeLeases(mustLeases(t, c.fleet), live, false)
	for _, err := range errs {
		t.Error(err)
	}
	for _, rec := range c.book.takeZombies() {
		c.removeNetns(rec)
	}
	if err := c.fleet.gc(live); err != nil {
		t.Error(err)
	}
	leases := mustLeases(t, c.fleet)
	errs, left := judgeLeases(leases, live, true)
	for _, err := range errs {
		t.Error(err)
	}
	requirePodsIntact(t, c.fleet, live, leases)
	requireNICsHome(t, c.fleet, live, leases)
	c.book.mu.Lock()
	c.book.freedByGC += strays - left
	c.book.checkedLeases += len(live)
	c.book.mu.Unlock()
}

// waitAdded waits until n pods started, or the churn stopped.
func (c *churn) waitAdded(n int, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for {
		if c.book.startedCount() >= n {
			return true
		}
		if c.stop.Load() || time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
}
