package ipam

import (
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// fakeClock is a clock tests move by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{t: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func mustPools(t testing.TB, cfg []PoolConfig, node string) *Pools {
	t.Helper()
	pools, err := NewPools(cfg, node)
	if err != nil {
		t.Fatalf("NewPools: %v", err)
	}
	return pools
}

// openTest opens an allocator on a fresh file and closes it at the end.
func openTest(t testing.TB, pools *Pools, opt Options) (*Allocator, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "state", "leases.db")
	return reopen(t, path, pools, opt), path
}

func reopen(t testing.TB, path string, pools *Pools, opt Options) *Allocator {
	t.Helper()
	a, err := Open(path, pools, opt)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

func request(sandbox, ifname, pool string) Request {
	return Request{Sandbox: sandbox, IfName: ifname, CNIIfName: "eth0", Network: "railnet", Pool: pool,
		NICs: []string{"mlx5_0"}, Mode: "macvlan", PodNamespace: "ns", PodName: "pod-" + sandbox}
}

// addrsOf maps each lease's key to its address.
func addrsOf(leases []Lease) map[Key]string {
	out := make(map[Key]string, len(leases))
	for _, l := range leases {
		out[l.Key()] = l.Address.Addr().String()
	}
	return out
}
