package raild

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"
)

// concurrency is how many ADDs/DELs are in flight at once in each phase.
const concurrency = 200

// phase is one burst of concurrent calls: DELs of some sandboxes and ADDs
// of others, all released together.
type phase struct {
	name     string
	del, add []int // sandbox numbers
	live     []int // sandboxes that must hold a lease once the phase is over
}

func sandboxName(i int) string { return fmt.Sprintf("sb-%04d", i) }

func span(from, to int) []int {
	out := make([]int, 0, to-from)
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}

// TestConcurrentAllocateRelease runs 200 concurrent ADDs, then 100 DELs
// racing 100 ADDs, then 200 DELs, while `raild leases --json` is polled;
// every snapshot and every phase's end must match what the clients were told.
func TestConcurrentAllocateRelease(t *testing.T) {
	phases := []phase{
		{name: "200 ADDs", add: span(0, concurrency), live: span(0, concurrency)},
		{name: "100 DELs race 100 ADDs", del: span(0, concurrency/2), add: span(concurrency, concurrency*3/2),
			live: span(concurrency/2, concurrency*3/2)},
		{name: "200 DELs", del: span(concurrency/2, concurrency*3/2)},
	}
	tests := []struct {
		name string
		via  func(r *raildProc) allocator
	}{
		{name: "api.Client from goroutines", via: func(r *raildProc) allocator { return clientAllocator{r.client(), r.netns} }},
		{name: "rail-ipam processes", via: func(r *raildProc) allocator { return pluginAllocator{railIPAM(r.socket), r.netns} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRaild(t, "10.9.0.0/16")
			r.start()
			book := newLedger()
			stopWatch := watch(t, r, book)
			for _, ph := range phases {
				runPhase(t, tt.via(r), book, ph)
				assertLive(t, r, book, ph)
			}
			snapshots := stopWatch()
			if snapshots < 3 {
				t.Errorf("only %d lease snapshots were taken during the phases", snapshots)
			}
			t.Logf("%d snapshots of raild leases --json judged while calls were in flight", snapshots)
			pools, err := r.client().Pools(context.Background())
			if err != nil || len(pools) != 1 || pools[0].Used != 0 {
				t.Fatalf("pools at the end = %+v, %v; want p with nothing used", pools, err)
			}
		})
	}
}

// runPhase starts every call of the phase together and waits for all.
func runPhase(t *testing.T, via allocator, book *ledger, ph phase) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	start := make(chan struct{})
	var wg sync.WaitGroup
	call := func(what string, i int, fn func(context.Context, allocator, string) error) {
		defer wg.Done()
		<-start
		if err := fn(ctx, via, sandboxName(i)); err != nil {
			t.Errorf("%s: %s %s: %v", ph.name, what, sandboxName(i), err)
		}
	}
	for _, i := range ph.del {
		wg.Add(1)
		go call("DEL", i, book.del)
	}
	for _, i := range ph.add {
		wg.Add(1)
		go call("ADD", i, book.add)
	}
	close(start)
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
}

// assertLive checks, once the phase is over, that the leases are exactly
// the live sandboxes with the addresses their ADDs answered.
func assertLive(t *testing.T, r *raildProc, book *ledger, ph phase) {
	t.Helper()
	from := time.Now()
	leases := r.mustLeases()
	for _, err := range book.judge(leases, from, time.Now()) {
		t.Errorf("after %s: %v", ph.name, err)
	}
	got := sandboxes(leases)
	want := make([]string, 0, len(ph.live))
	for _, i := range ph.live {
		want = append(want, sandboxName(i))
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after %s: %d leases, want %d: got %v", ph.name, len(got), len(want), got)
	}
}

// watch polls `raild leases --json` until the returned stop is called, and
// judges every snapshot against the ledger; stop returns how many it took.
func watch(t *testing.T, r *raildProc, book *ledger) (stop func() int) {
	done := make(chan struct{})
	count := make(chan int, 1)
	go func() {
		n := 0
		defer func() { count <- n }()
		for {
			select {
			case <-done:
				return
			default:
			}
			from := time.Now()
			leases, err := r.leases()
			if err != nil {
				t.Errorf("watch: %v", err)
				return
			}
			for _, err := range book.judge(leases, from, time.Now()) {
				t.Errorf("snapshot %d: %v", n, err)
			}
			n++
		}
	}()
	stop = sync.OnceValue(func() int {
		close(done)
		return <-count
	})
	t.Cleanup(func() { stop() })
	return stop
}
