package chaos

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"

	"github.com/railcni/rail/integration/harness"
	"github.com/railcni/rail/pkg/api"
)

// podRec is a pod whose ADD was answered: its sandbox and the address the
// answer gave its rail interface.
type podRec struct {
	spec podSpec
	pod  *harness.Pod
	addr string // CIDR; "" for a sandbox whose ADD failed
}

// book is the ledger of what the runtime was told: the pods alive (ADD
// answered, no DEL sent), the pods whose DEL was answered while raild was
// down and whose netns the runtime removes only later (zombies: their
// leases are what GC must free), the sandboxes whose DEL failed while
// raild was down (dying: the runtime retries their DEL), and counts for
// the report.
type book struct {
	mu      sync.Mutex
	live    map[string]*podRec // by sandbox
	zombies []*podRec
	dying   []*podRec
	byKind  map[string]int // pods started, by kind

	added, deleted int // ADDs and DELs answered
	failedAdds     int // ADDs that failed while raild was down (retried)
	downDels       int // DELs answered while raild was down
	failedDels     int // DELs that failed while raild was down (retried)
	freedByGC      int // leases of dead pods CNI GC freed after restarts
	checkedLeases  int // live pods' leases judged after restarts
}

func newBook() *book { return &book{live: map[string]*podRec{}, byKind: map[string]int{}} }

func (b *book) addLive(rec *podRec) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.live[rec.pod.Sandbox] = rec
	b.added++
	b.byKind[rec.spec.kind.name]++
}

func (b *book) startedCount() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.added
}

func (b *book) gcCount() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.freedByGC
}

func (b *book) liveCount() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.live)
}

// takeVictim removes a random live pod of a kind that fits (the pod the
// runtime now tears down); nil when none is alive.
func (b *book) takeVictim(rng *rand.Rand, fits func(*kind) bool) *podRec {
	b.mu.Lock()
	defer b.mu.Unlock()
	sandboxes := make([]string, 0, len(b.live))
	for s, rec := range b.live {
		if fits(rec.spec.kind) {
			sandboxes = append(sandboxes, s)
		}
	}
	if len(sandboxes) == 0 {
		return nil
	}
	sort.Strings(sandboxes) // map order is not seeded
	rec := b.live[sandboxes[rng.IntN(len(sandboxes))]]
	delete(b.live, rec.pod.Sandbox)
	return rec
}

// deletedPod counts an answered DEL; zombie says the runtime keeps the
// netns until raild is back (so only GC can tell the lease is stale).
func (b *book) deletedPod(rec *podRec, whileDown, zombie bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.deleted++
	if whileDown {
		b.downDels++
	}
	if zombie {
		b.zombies = append(b.zombies, rec)
	}
}

func (b *book) failedAdd() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.failedAdds++
}

// dyingPod records a sandbox whose DEL failed while raild was down.
func (b *book) dyingPod(rec *podRec) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.failedDels++
	b.dying = append(b.dying, rec)
}

// takeDying returns and forgets the sandboxes whose DEL is to retry.
func (b *book) takeDying() []*podRec { return b.take(&b.dying) }

// takeZombies returns and forgets the pods whose netns is still to remove.
func (b *book) takeZombies() []*podRec { return b.take(&b.zombies) }

func (b *book) take(list *[]*podRec) []*podRec {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := *list
	*list = nil
	return out
}

// liveRecs lists the live pods, by sandbox.
func (b *book) liveRecs() []*podRec {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]*podRec, 0, len(b.live))
	for _, rec := range b.live {
		out = append(out, rec)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].pod.Sandbox < out[j].pod.Sandbox })
	return out
}

// judgeLeases compares raild's leases with the live pods: no address
// leased twice, every live pod holding exactly the lease its ADD answered
// (address, pool, interface). Leases of pods that are not alive are
// errors when strict (after GC), else counted as strays (awaiting GC).
func judgeLeases(leases []api.Lease, live []*podRec, strict bool) (errs []error, strays int) {
	bySandbox := make(map[string]*podRec, len(live))
	for _, rec := range live {
		bySandbox[rec.pod.Sandbox] = rec
	}
	holder := map[string]string{}
	held := map[string]int{}
	for _, l := range leases {
		if other, dup := holder[l.Address]; dup {
			errs = append(errs, fmt.Errorf("address %s is leased to both %s and %s", l.Address, other, l.Sandbox))
		}
		holder[l.Address] = l.Sandbox
		rec, ok := bySandbox[l.Sandbox]
		if !ok {
			if strict {
				errs = append(errs, fmt.Errorf("lease %s (%s, pool %s, network %s) of sandbox %s survived CNI GC: that pod is gone",
					l.Address, l.IfName, l.Pool, l.Network, l.Sandbox))
			}
			strays++
			continue
		}
		held[l.Sandbox]++
		errs = append(errs, judgeOne(rec, l)...)
	}
	for _, rec := range live {
		switch n := held[rec.pod.Sandbox]; {
		case n == 0:
			errs = append(errs, fmt.Errorf("lost lease: pod %s (%s, sandbox %s) was given %s and is alive, but raild lists no lease for it",
				rec.spec.name, rec.spec.kind.name, rec.pod.Sandbox, rec.addr))
		case n > 1:
			errs = append(errs, fmt.Errorf("pod %s (sandbox %s) holds %d leases, want 1", rec.spec.name, rec.pod.Sandbox, n))
		}
	}
	return errs, strays
}

func judgeOne(rec *podRec, l api.Lease) []error {
	var errs []error
	if l.Address != rec.addr {
		errs = append(errs, fmt.Errorf("pod %s (sandbox %s) was given %s but its lease says %s", rec.spec.name, rec.pod.Sandbox, rec.addr, l.Address))
	}
	if l.Pool != rec.spec.pool {
		errs = append(errs, fmt.Errorf("pod %s asked for pool %s but its lease is from %s", rec.spec.name, rec.spec.pool, l.Pool))
	}
	if l.IfName != rec.spec.kind.podIf {
		errs = append(errs, fmt.Errorf("pod %s: lease on interface %q, want %q", rec.spec.name, l.IfName, rec.spec.kind.podIf))
	}
	if rec.spec.kind.exclusive && len(l.NICs) != 1 {
		errs = append(errs, fmt.Errorf("move pod %s: lease names NICs %v, want exactly one", rec.spec.name, l.NICs))
	}
	return errs
}
