package ipam

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
)

func benchAllocator(b *testing.B) *Allocator {
	pools := mustPools(b, []PoolConfig{{Name: "p", Subnet: "10.0.0.0/16"}}, "n1")
	a, _ := openTest(b, pools, Options{})
	return a
}

func reportAllocsPerSec(b *testing.B) {
	if s := b.Elapsed().Seconds(); s > 0 {
		b.ReportMetric(float64(b.N)/s, "allocs/s")
	}
}

// BenchmarkAllocateRelease is one caller: each op is an allocation and a
// release, each durable (one commit and fsync apiece).
func BenchmarkAllocateRelease(b *testing.B) {
	a := benchAllocator(b)
	b.ResetTimer()
	for i := range b.N {
		sb := fmt.Sprint("sb", i)
		if _, err := a.Allocate(request(sb, "rail0", "p")); err != nil {
			b.Fatal(err)
		}
		if _, err := a.Release(sb, "eth0", "railnet"); err != nil {
			b.Fatal(err)
		}
	}
	reportAllocsPerSec(b)
}

// BenchmarkAllocateParallel has many concurrent callers (128 goroutines on
// 2 CPUs), each op an allocation and a release. "batched" is the allocator
// as is; "one-at-a-time" puts a lock around each call, which is what the
// store would do with one transaction and fsync per request.
func BenchmarkAllocateParallel(b *testing.B) {
	for _, serial := range []bool{false, true} {
		name := "batched"
		if serial {
			name = "one-at-a-time"
		}
		b.Run(name, func(b *testing.B) {
			a := benchAllocator(b)
			var next atomic.Int64
			var one sync.Mutex
			call := func(f func() error) error {
				if serial {
					one.Lock()
					defer one.Unlock()
				}
				return f()
			}
			b.SetParallelism(64)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					sb := fmt.Sprint("sb", next.Add(1))
					err := call(func() error { _, err := a.Allocate(request(sb, "rail0", "p")); return err })
					if err == nil {
						err = call(func() error { _, err := a.Release(sb, "eth0", "railnet"); return err })
					}
					if err != nil {
						b.Error(err)
						return
					}
				}
			})
			reportAllocsPerSec(b)
		})
	}
}
