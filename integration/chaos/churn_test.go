package chaos

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/railcni/rail/integration/harness"
)

// kubeletBackoff is how long a worker waits before it retries a pod whose
// ADD failed (the kubelet backs off before a new sandbox).
const kubeletBackoff = 20 * time.Millisecond

// maxUnexpected stops the churn after this many calls failed while raild
// was up (each is already reported; more would only repeat them).
const maxUnexpected = 20

// churn runs pods through their lives on parallel workers, as kubelets and
// a runtime would, while a controller may kill and restart raild.
type churn struct {
	t     *testing.T
	fleet *fleet
	book  *book
	scale scale

	// gate: workers hold it for reading around each CNI call and what it
	// changes; the controller takes it to quiesce the node.
	gate       sync.RWMutex
	epoch      atomic.Int64 // odd while raild is down: bumped at each kill and each restart
	answered   atomic.Int64 // CNI ADDs and DELs returned, with or without error
	unexpected atomic.Int64 // calls that failed while raild was up
	names      atomic.Int64
	stop       atomic.Bool
	workers    sync.WaitGroup
}

func newChurn(t *testing.T, f *fleet, sc scale) *churn {
	return &churn{t: t, fleet: f, book: newBook(), scale: sc}
}

// start runs the workers, each with its own stream of the seed.
func (c *churn) start(seed uint64) {
	for w := range c.scale.workers {
		c.workers.Add(1)
		go func() {
			defer c.workers.Done()
			c.worker(rand.New(rand.NewPCG(seed, uint64(w)+1)))
		}()
	}
}

// halt stops the workers after their current step and waits for them.
func (c *churn) halt() {
	c.stop.Store(true)
	c.workers.Wait()
}

func (c *churn) worker(rng *rand.Rand) {
	var pending *podSpec // a pod the kubelet still tries to start
	for !c.stop.Load() {
		c.gate.RLock()
		pending = c.step(rng, pending)
		c.gate.RUnlock()
	}
	if pending != nil {
		c.fleet.done(*pending)
	}
}

// step starts a pod (a new one, or the pending one again) while fewer than
// scale.live are alive, else tears a random live pod down.
func (c *churn) step(rng *rand.Rand, pending *podSpec) *podSpec {
	if pending == nil && c.book.liveCount() >= c.scale.live {
		if rec := c.book.takeVictim(rng, anyKind); rec != nil {
			c.teardown(rng, rec)
		}
		return nil
	}
	if pending == nil {
		spec := c.fleet.pickSpec(rng, fmt.Sprintf("p%d", c.names.Add(1)))
		pending = &spec
	}
	if c.startPod(*pending) {
		return nil
	}
	return pending
}

func anyKind(*kind) bool { return true }

// calm reports whether raild was up for a whole call that began in epoch.
func (c *churn) calm(epoch int64) bool { return epoch%2 == 0 && c.epoch.Load() == epoch }

// startPod makes a sandbox and runs ADD; on failure it cleans up as a
// runtime does (DEL, netns removed) and reports false for a retry.
func (c *churn) startPod(spec podSpec) bool {
	pod, err := c.fleet.newSandbox(spec)
	if err != nil {
		c.fail(fmt.Errorf("sandbox for %s: %w", spec.name, err))
		return false
	}
	epoch := c.epoch.Load()
	addr, err := c.fleet.add(spec, pod)
	c.answered.Add(1)
	if err == nil {
		c.book.addLive(&podRec{spec: spec, pod: pod, addr: addr})
		return true
	}
	calm := c.calm(epoch)
	if calm {
		c.fail(fmt.Errorf("ADD of %s (%s, pool %s, sandbox %s) failed while raild was up: %w",
			spec.name, spec.kind.name, spec.pool, pod.Sandbox, err))
	} else {
		c.book.failedAdd()
	}
	c.cleanUp(spec, pod)
	if !calm {
		time.Sleep(kubeletBackoff)
	}
	return false
}

// cleanUp is the runtime's teardown of a sandbox whose ADD failed; a DEL
// that fails while raild is down is retried once raild is back.
func (c *churn) cleanUp(spec podSpec, pod *harness.Pod) {
	epoch := c.epoch.Load()
	err := c.fleet.del(spec, pod)
	c.answered.Add(1)
	if err != nil {
		c.delFailed(&podRec{spec: spec, pod: pod}, c.calm(epoch), err)
		return
	}
	if err := c.fleet.node.DeletePodNetns(pod); err != nil {
		c.fail(fmt.Errorf("remove netns of %s: %w", spec.name, err))
	}
}

// delFailed keeps a sandbox whose DEL failed for a retry (as the kubelet
// retries StopPodSandbox); a failure while raild was up is a defect.
func (c *churn) delFailed(rec *podRec, calm bool, err error) {
	if calm {
		c.fail(fmt.Errorf("DEL of %s (%s, sandbox %s) failed while raild was up: %w",
			rec.spec.name, rec.spec.kind.name, rec.pod.Sandbox, err))
	}
	c.book.dyingPod(rec)
}

// teardown runs DEL for a live pod. When raild was down during the DEL
// the runtime may keep the netns until raild is back (a zombie: then only
// CNI GC can tell its lease is stale).
func (c *churn) teardown(rng *rand.Rand, rec *podRec) {
	epoch := c.epoch.Load()
	err := c.fleet.del(rec.spec, rec.pod)
	c.answered.Add(1)
	if err != nil {
		c.delFailed(rec, c.calm(epoch), err)
		return
	}
	down := !c.calm(epoch)
	zombie := down && rec.spec.kind.gcReaches && rng.IntN(2) == 0
	c.book.deletedPod(rec, down, zombie)
	if !zombie {
		c.removeNetns(rec)
	}
}

// retryDying runs DEL again for the sandboxes whose DEL failed while raild
// was down (raild is up now: it must succeed) and removes their netns.
func (c *churn) retryDying() {
	for _, rec := range c.book.takeDying() {
		if err := c.fleet.del(rec.spec, rec.pod); err != nil {
			c.fail(fmt.Errorf("retried DEL of %s (%s, sandbox %s) failed with raild up: %w",
				rec.spec.name, rec.spec.kind.name, rec.pod.Sandbox, err))
			continue
		}
		if rec.addr == "" { // a failed ADD's sandbox: the pod's retry holds the fleet's token
			if err := c.fleet.node.DeletePodNetns(rec.pod); err != nil {
				c.fail(fmt.Errorf("remove netns of %s: %w", rec.spec.name, err))
			}
			continue
		}
		c.book.deletedPod(rec, false, false)
		c.removeNetns(rec)
	}
}

func (c *churn) removeNetns(rec *podRec) {
	if err := c.fleet.node.DeletePodNetns(rec.pod); err != nil {
		c.fail(fmt.Errorf("remove netns of %s: %w", rec.spec.name, err))
	}
	c.fleet.done(rec.spec)
}

// fail reports an error; after maxUnexpected the churn stops.
func (c *churn) fail(err error) {
	c.t.Error(err)
	if c.unexpected.Add(1) >= maxUnexpected {
		c.stop.Store(true)
	}
}

// waitAnswered waits until n CNI calls were answered, or the churn
// stopped, for up to timeout; false when it did not get there.
func (c *churn) waitAnswered(n int64, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for c.answered.Load() < n {
		if c.stop.Load() || time.Now().After(deadline) {
			return false
		}
		time.Sleep(2 * time.Millisecond)
	}
	return true
}
