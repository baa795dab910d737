package ipam

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// manyExcludes returns n distinct single-address excludes inside
// 10.0.0.0/16 in a fixed shuffled order (every second address, so no two
// touch and none merge).
func manyExcludes(n int) []string {
	out := make([]string, n)
	for i := range n {
		a := 2*i + 2
		out[i] = fmt.Sprintf("10.%d.%d.%d", a>>16, a>>8&0xff, a&0xff)
	}
	rand.New(rand.NewPCG(1, 2)).Shuffle(n, func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// BenchmarkNewPoolsExcludes is raild's start-up cost for one pool with
// 50,000 excludes (and a second pool, so the overlap check runs).
func BenchmarkNewPoolsExcludes(b *testing.B) {
	cfg := []PoolConfig{{Name: "big", Subnet: "10.0.0.0/8", Exclude: manyExcludes(50_000)}, {Name: "small", Subnet: "192.168.0.0/24"}}
	b.ResetTimer()
	for range b.N {
		if _, err := NewPools(cfg, "n1"); err != nil {
			b.Fatal(err)
		}
	}
}
