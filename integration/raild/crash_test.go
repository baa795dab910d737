package raild

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/railcni/rail/pkg/api"
)

// crashBook is what clients were told across raild's crashes.
type crashBook struct {
	mu    sync.Mutex
	held  map[string]string // sandbox -> address: ADD answered, no DEL sent
	maybe map[string]bool   // ADD or DEL sent and cut off by the crash
	gone  map[string]bool   // DEL answered
	cut   int               // calls cut off by SIGKILL, over all rounds
}

func newCrashBook() *crashBook {
	return &crashBook{held: map[string]string{}, maybe: map[string]bool{}, gone: map[string]bool{}}
}

func (b *crashBook) sent(sandbox string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.held, sandbox)
	b.maybe[sandbox] = true
}

func (b *crashBook) answered(sandbox, addr string, released bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.maybe, sandbox)
	if released {
		b.gone[sandbox] = true
	} else {
		b.held[sandbox] = addr
	}
}

// TestCrashSafety SIGKILLs raild while allocations and releases are in
// flight, restarts it on the same state dir, and checks that every address
// a client was given is leased exactly once, that answered releases stay
// released, and that new allocations never reuse a held address.
func TestCrashSafety(t *testing.T) {
	rounds := []struct {
		name      string
		workers   int
		killAfter int64 // answered ADDs before SIGKILL
		release   bool  // workers also release every third lease they got
	}{
		{name: "64 allocators killed after 30 answers", workers: 64, killAfter: 30},
		{name: "64 allocators and releasers killed after 120 answers", workers: 64, killAfter: 120, release: true},
		{name: "16 allocators killed at the first answer", workers: 16, killAfter: 1, release: true},
		{name: "200 allocators killed after 150 answers", workers: 200, killAfter: 150, release: true},
	}
	r := newRaild(t, "10.9.0.0/16")
	book := newCrashBook()
	r.start()
	for i, round := range rounds {
		ok := t.Run(round.name, func(t *testing.T) {
			fireAndKill(t, r, book, i, round.workers, round.killAfter, round.release)
			r.start()
			verifyAfterCrash(t, r, book)
			allocateFresh(t, r, book, fmt.Sprintf("fresh%d", i), 50)
		})
		if !ok {
			return
		}
	}
	if book.cut == 0 {
		t.Fatal("no call was in flight at any SIGKILL: the test proved nothing")
	}
	t.Logf("%d leases held, %d released, %d calls cut by SIGKILL", len(book.held), len(book.gone), book.cut)
}

// fireAndKill runs workers that allocate (and maybe release) without pause
// and SIGKILLs raild once killAfter ADDs were answered.
func fireAndKill(t *testing.T, r *raildProc, book *crashBook, round, workers int, killAfter int64, release bool) {
	c := clientAllocator{r.client(), r.netns}
	ctx := context.Background()
	var killed atomic.Bool
	var answers atomic.Int64
	trigger := make(chan struct{})
	var triggerOnce sync.Once
	var wg sync.WaitGroup
	call := func(sandbox string, del bool) bool {
		book.sent(sandbox)
		var addr string
		var err error
		if del {
			err = c.del(ctx, sandbox)
		} else {
			addr, err = c.add(ctx, sandbox)
		}
		if err != nil {
			if !killed.Load() {
				t.Errorf("%s before the kill: %v", sandbox, err)
			}
			book.mu.Lock()
			book.cut++
			book.mu.Unlock()
			return false
		}
		book.answered(sandbox, addr, del)
		return true
	}
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; !killed.Load(); n++ {
				sandbox := fmt.Sprintf("r%d-w%03d-%05d", round, w, n)
				if !call(sandbox, false) {
					return
				}
				if answers.Add(1) >= killAfter {
					triggerOnce.Do(func() { close(trigger) })
				}
				if release && n%3 == 2 && !call(fmt.Sprintf("r%d-w%03d-%05d", round, w, n-1), true) {
					return
				}
			}
		}()
	}
	select {
	case <-trigger:
	case <-time.After(time.Minute):
		t.Errorf("only %d ADDs answered in a minute", answers.Load())
	}
	killed.Store(true)
	r.kill()
	wg.Wait()
}

// verifyAfterCrash compares the leases of the restarted raild with the book.
func verifyAfterCrash(t *testing.T, r *raildProc, book *crashBook) {
	t.Helper()
	for _, err := range book.settle(r.mustLeases()) {
		t.Error(err)
	}
}

// settle judges the leases of a restarted raild: each address once, every
// held lease with its address, no released or unknown lease; then it
// settles the calls the crash cut off by what reached the disk.
func (b *crashBook) settle(leases []api.Lease) []error {
	b.mu.Lock()
	defer b.mu.Unlock()
	var errs []error
	holder := map[string]string{}
	listed := map[string]bool{}
	for _, l := range leases {
		if other, dup := holder[l.Address]; dup {
			errs = append(errs, fmt.Errorf("address %s is leased to both %s and %s", l.Address, other, l.Sandbox))
		}
		holder[l.Address] = l.Sandbox
		if listed[l.Sandbox] {
			errs = append(errs, fmt.Errorf("%s holds two leases", l.Sandbox))
		}
		listed[l.Sandbox] = true
		switch addr, held := b.held[l.Sandbox]; {
		case held && addr != l.Address:
			errs = append(errs, fmt.Errorf("%s was given %s but holds %s after the restart", l.Sandbox, addr, l.Address))
		case b.maybe[l.Sandbox]:
			b.held[l.Sandbox] = l.Address // the cut call had reached the disk
			delete(b.maybe, l.Sandbox)
		case b.gone[l.Sandbox]:
			errs = append(errs, fmt.Errorf("%s was released (DEL answered) but holds %s after the restart", l.Sandbox, l.Address))
		case !held:
			errs = append(errs, fmt.Errorf("lease %s for %s that no client asked for", l.Address, l.Sandbox))
		}
	}
	for sandbox, addr := range b.held {
		if !listed[sandbox] {
			errs = append(errs, fmt.Errorf("lost lease: %s was given %s, never released, and is gone after the restart", sandbox, addr))
		}
	}
	for sandbox := range b.maybe {
		b.gone[sandbox] = true // cut before it reached the disk
		delete(b.maybe, sandbox)
	}
	return errs
}

// allocateFresh asks for n new leases at once and checks that none reuses
// an address still held, then re-asks every held lease (re-entrant ADD).
func allocateFresh(t *testing.T, r *raildProc, book *crashBook, prefix string, n int) {
	t.Helper()
	c := clientAllocator{r.client(), r.netns}
	ctx := context.Background()
	book.mu.Lock()
	held := make(map[string]string, len(book.held))
	for sandbox, addr := range book.held {
		held[sandbox] = addr
	}
	book.mu.Unlock()
	for sandbox, want := range held {
		if got, err := c.add(ctx, sandbox); err != nil || got != want {
			t.Errorf("repeated ADD of %s after the restart = %s, %v; want %s", sandbox, got, err, want)
		}
	}
	byAddr := map[string]string{}
	for sandbox, addr := range held {
		byAddr[addr] = sandbox
	}
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sandbox := fmt.Sprintf("%s-%03d", prefix, i)
			addr, err := c.add(ctx, sandbox)
			if err != nil {
				t.Errorf("ADD %s after the restart: %v", sandbox, err)
				return
			}
			book.answered(sandbox, addr, false)
		}()
	}
	wg.Wait()
	book.mu.Lock()
	defer book.mu.Unlock()
	for i := 0; i < n; i++ {
		sandbox := fmt.Sprintf("%s-%03d", prefix, i)
		addr, ok := book.held[sandbox]
		if !ok {
			continue
		}
		if other, dup := byAddr[addr]; dup {
			t.Errorf("%s was given %s, already held by %s", sandbox, addr, other)
		}
		byAddr[addr] = sandbox
	}
}
