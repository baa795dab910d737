package raild

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// benchSubnet is large enough that no benchmark run exhausts it.
const benchSubnet = "10.64.0.0/10"

// BenchmarkAllocate measures durable allocations per second through the
// socket: one caller at a time, and many at once (the store batches them).
func BenchmarkAllocate(b *testing.B) {
	r := newRaild(b, benchSubnet)
	r.start()
	var next atomic.Int64
	sandbox := func() string { return fmt.Sprintf("bench-%08d", next.Add(1)) }
	tests := []struct {
		name    string
		callers int // goroutines per GOMAXPROCS; 0: sequential
	}{
		{name: "sequential"},
		{name: "parallel-32xGOMAXPROCS", callers: 32},
	}
	for _, tt := range tests {
		b.Run(tt.name, func(b *testing.B) {
			ctx := context.Background()
			if tt.callers == 0 {
				c := clientAllocator{r.client(), r.netns}
				for i := 0; i < b.N; i++ {
					if _, err := c.add(ctx, sandbox()); err != nil {
						b.Fatal(err)
					}
				}
			} else {
				b.SetParallelism(tt.callers)
				b.RunParallel(func(pb *testing.PB) {
					c := clientAllocator{r.client(), r.netns}
					for pb.Next() {
						if _, err := c.add(ctx, sandbox()); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "allocs/s")
		})
	}
}

// BenchmarkPluginRoundTrip times a fresh rail-ipam process ADD then DEL
// against upstream host-local (own data dir) in the same loop, alternating,
// and reports both and their ratio. ns/op is the sum of the two.
func BenchmarkPluginRoundTrip(b *testing.B) {
	if bins.hostLocal == "" {
		b.Skip("host-local is built only when benchmarks run")
	}
	r := newRaild(b, benchSubnet)
	r.start()
	plugins := []struct {
		name   string
		plugin ipamPlugin
		total  time.Duration
	}{
		{name: "rail-ipam", plugin: railIPAM(r.socket)},
		{name: "host-local", plugin: hostLocal("10.200.0.0/16", b.TempDir())},
	}
	ctx := context.Background()
	for i := 0; i < b.N; i++ {
		sandbox := fmt.Sprintf("rt-%08d", i)
		for k := range plugins {
			p := &plugins[(i+k)%len(plugins)]
			start := time.Now()
			if _, err := p.plugin.add(ctx, sandbox, r.netns); err != nil {
				b.Fatal(err)
			}
			if err := p.plugin.del(ctx, sandbox, r.netns); err != nil {
				b.Fatal(err)
			}
			p.total += time.Since(start)
		}
	}
	for _, p := range plugins {
		b.ReportMetric(float64(p.total.Microseconds())/1000/float64(b.N), p.name+"-ms/op")
	}
	b.ReportMetric(float64(plugins[0].total)/float64(plugins[1].total), "rail/host-local")
}

// BenchmarkRaildRSS reports raild's resident memory with 1,000 leases
// (goal: under 40 MiB), on a fresh daemon each time.
func BenchmarkRaildRSS(b *testing.B) {
	const leases, callers = 1000, 16
	var rss, idle, peak int
	for i := 0; i < b.N; i++ {
		r := newRaild(b, benchSubnet)
		r.start()
		idle = max(idle, r.statusKiB("VmRSS"))
		c := clientAllocator{r.client(), r.netns}
		var wg sync.WaitGroup
		for w := 0; w < callers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for n := w; n < leases; n += callers {
					if _, err := c.add(context.Background(), fmt.Sprintf("rss-%05d", n)); err != nil {
						b.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		if got := len(r.mustLeases()); got != leases {
			b.Fatalf("%d leases, want %d", got, leases)
		}
		rss, peak = max(rss, r.statusKiB("VmRSS")), max(peak, r.statusKiB("VmHWM"))
		r.stop()
	}
	b.ReportMetric(float64(idle)/1024, "MiB-RSS-idle")
	b.ReportMetric(float64(rss)/1024, "MiB-RSS-1000-leases")
	b.ReportMetric(float64(peak)/1024, "MiB-HWM")
}
