package ipam

import (
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"
)

// claims records which key holds each address, as callers saw it.
type claims struct {
	mu     sync.Mutex
	holder map[netip.Addr]Key
	live   map[Key]netip.Addr
}

func (c *claims) take(t *testing.T, l Lease) {
	c.mu.Lock()
	defer c.mu.Unlock()
	addr := l.Address.Addr()
	if k, taken := c.holder[addr]; taken && k != l.Key() {
		t.Errorf("address %s handed to %v while %v holds it", addr, l.Key(), k)
	}
	c.holder[addr], c.live[l.Key()] = l.Key(), addr
}

// drop forgets a key before its release is called: from then on its address
// may go to someone else.
func (c *claims) drop(k Key, forget bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if forget {
		delete(c.holder, c.live[k])
	}
	delete(c.live, k)
}

func TestConcurrentAllocateRelease(t *testing.T) {
	tests := []struct {
		name     string
		subnet   string
		cooldown time.Duration // with a cooldown the frozen clock never lets an address back
	}{
		{"ipv4 reuse at once", "10.0.0.0/22", 0},
		{"ipv4 with cooldown: every address once", "10.0.0.0/20", time.Hour},
		{"ipv6 /64", "fd00:10::/64", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := newFakeClock()
			pools := mustPools(t, []PoolConfig{{Name: "p", Subnet: tt.subnet}}, "n1")
			opt := Options{Cooldown: tt.cooldown, Now: clock.Now}
			a, path := openTest(t, pools, opt)
			c := &claims{holder: map[netip.Addr]Key{}, live: map[Key]netip.Addr{}}
			hammer(t, a, c, tt.cooldown == 0)
			checkLeases(t, "in memory", a.Leases(), c.live)
			a.Close()
			checkLeases(t, "after reopen", reopen(t, path, pools, opt).Leases(), c.live)
		})
	}
}

// hammer runs 200 goroutines that allocate (alone or several at once),
// re-allocate the same keys, and release, plus goroutines that race on
// shared keys.
func hammer(t *testing.T, a *Allocator, c *claims, reuse bool) {
	const workers, rounds = 200, 6
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for r := range rounds {
				sb := fmt.Sprintf("sb-%d-%d", w, r)
				reqs := []Request{request(sb, "rail0", "p")}
				if r%2 == 1 {
					reqs = append(reqs, request(sb, "rail1", "p"))
				}
				leases, err := a.AllocateMany(reqs)
				if err != nil {
					t.Errorf("AllocateMany(%s): %v", sb, err)
					return
				}
				for _, l := range leases {
					c.take(t, l)
				}
				if again, err := a.Allocate(reqs[0]); err != nil || again.Address != leases[0].Address {
					t.Errorf("Allocate(%s) again = %v, %v; want %v", sb, again.Address, err, leases[0].Address)
				}
				if r%3 == 0 {
					continue // keep this one
				}
				for _, l := range leases {
					c.drop(l.Key(), reuse)
				}
				if freed, err := a.Release(sb, "eth0", "railnet"); err != nil || len(freed) != len(leases) {
					t.Errorf("Release(%s) = %d, %v; want %d", sb, len(freed), err, len(leases))
				}
			}
		})
	}
	for s := range 20 { // 10 goroutines race for each shared key: one address per key
		for range 10 {
			wg.Go(func() {
				l, err := a.Allocate(request(fmt.Sprint("shared-", s), "rail0", "p"))
				if err != nil {
					t.Errorf("Allocate(shared-%d): %v", s, err)
					return
				}
				c.take(t, l)
			})
		}
	}
	wg.Wait()
}

// checkLeases compares the leases with what callers were given and looks
// for an address held twice.
func checkLeases(t *testing.T, when string, leases []Lease, want map[Key]netip.Addr) {
	t.Helper()
	seen := map[netip.Addr]Key{}
	for _, l := range leases {
		if k, dup := seen[l.Address.Addr()]; dup {
			t.Errorf("%s: address %s leased to %v and %v", when, l.Address, k, l.Key())
		}
		seen[l.Address.Addr()] = l.Key()
		if w, ok := want[l.Key()]; !ok || w != l.Address.Addr() {
			t.Errorf("%s: lease %v = %s, callers hold %v (known %v)", when, l.Key(), l.Address, w, ok)
		}
	}
	if len(leases) != len(want) {
		t.Errorf("%s: %d leases, callers hold %d", when, len(leases), len(want))
	}
}

// A failed write leaves memory as it was: a reserved address is freed again,
// a lease whose release failed stays.
func TestWriteFailureRollsBack(t *testing.T) {
	pools := mustPools(t, []PoolConfig{{Name: "p", Subnet: "10.0.0.0/24"}}, "n1")
	a, _ := openTest(t, pools, Options{Cooldown: time.Hour})
	kept, err := a.Allocate(request("sb1", "rail0", "p"))
	if err != nil {
		t.Fatal(err)
	}
	if err := a.store.Close(); err != nil { // the disk goes away under the allocator
		t.Fatal(err)
	}
	if _, err := a.Allocate(request("sb2", "rail0", "p")); err == nil || !strings.Contains(err.Error(), "ipam: write") {
		t.Fatalf("Allocate on a closed file = %v, want a write error", err)
	}
	if _, err := a.Release("sb1", "eth0", "railnet"); err == nil {
		t.Fatal("Release on a closed file succeeded")
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.leases) != 1 || len(a.used) != 1 || len(a.cooling) != 0 || a.used[kept.Address.Addr()] != 1 {
		t.Errorf("after failed writes: %d leases, used %v, cooling %v; want only %s", len(a.leases), a.used, a.cooling, kept.Address)
	}
	if e := a.leases[kept.Key()]; e == nil || e.busy != nil || !e.committed {
		t.Errorf("the kept lease is %+v, want committed and not busy", e)
	}
}
