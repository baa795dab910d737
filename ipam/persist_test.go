package ipam

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/railcni/rail/ipam/store"
)

// coolingOnDisk reads the cooldown records straight from the file.
func coolingOnDisk(t *testing.T, path string) map[string]store.Cooldown {
	t.Helper()
	st, contents, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	out := map[string]store.Cooldown{}
	for _, c := range contents.Cooldowns {
		out[c.Addr.String()] = c
	}
	return out
}

func TestReopenKeepsLeasesAndCooldowns(t *testing.T) {
	for _, subnet := range []string{"10.0.0.0/24", "fd00:10::/64"} {
		t.Run(subnet, func(t *testing.T) {
			clock := newFakeClock()
			pools := mustPools(t, []PoolConfig{{Name: "p", Subnet: subnet}}, "n1")
			opt := Options{Cooldown: time.Hour, Now: clock.Now}
			a, path := openTest(t, pools, opt)
			for i := range 4 {
				if _, err := a.Allocate(request(fmt.Sprint("sb", i), "rail0", "p")); err != nil {
					t.Fatal(err)
				}
			}
			released, err := a.Release("sb1", "eth0", "railnet")
			if err != nil || len(released) != 1 {
				t.Fatalf("Release = %v, %v", released, err)
			}
			cooling := released[0].Address.Addr().String()
			before := a.Leases()
			a.Close() // no cleanup: the leases stay

			clock.Advance(30 * time.Minute)
			b := reopen(t, path, pools, opt)
			after := b.Leases()
			if fmt.Sprint(after) != fmt.Sprint(before) {
				t.Fatalf("leases after reopen:\n%v\nwant\n%v", after, before)
			}
			if st := b.Stats()[0]; st.Used != 3 || st.Cooling != 1 {
				t.Errorf("Stats after reopen = %+v, want used 3, cooling 1", st)
			}
			l, err := b.Allocate(request("sb9", "rail0", "p"))
			if err != nil {
				t.Fatal(err)
			}
			if l.Address.Addr().String() == cooling {
				t.Errorf("the cooling address %s was handed out again after reopen", cooling)
			}
			if again, _ := b.Allocate(request("sb0", "rail0", "p")); again.Address != before[0].Address {
				t.Errorf("same key after reopen = %s, want %s", again.Address, before[0].Address)
			}
			b.Close()

			clock.Advance(time.Hour)
			if _, ok := coolingOnDisk(t, path)[cooling]; !ok {
				t.Fatalf("cooldown of %s not on disk before it expired", cooling)
			}
			c := reopen(t, path, pools, opt)
			if st := c.Stats()[0]; st.Cooling != 0 {
				t.Errorf("Stats after the cooldown = %+v, want cooling 0", st)
			}
			c.Close()
			if got := coolingOnDisk(t, path); len(got) != 0 {
				t.Errorf("expired cooldowns left on disk: %v", got)
			}
		})
	}
}

func TestNextFitResumesAfterReopen(t *testing.T) {
	clock := newFakeClock()
	pools := mustPools(t, []PoolConfig{{Name: "p", Subnet: "10.0.0.0/24"}}, "n1")
	opt := Options{Now: clock.Now} // no cooldown: only the cursor keeps .1 and .2 unused
	a, path := openTest(t, pools, opt)
	for _, sb := range []string{"sb3", "sb2", "sb1", "sb0"} { // sb0 is the newest, 10.0.0.4
		clock.Advance(time.Second)
		if _, err := a.Allocate(request(sb, "rail0", "p")); err != nil {
			t.Fatal(err)
		}
	}
	for _, sb := range []string{"sb3", "sb2"} {
		if _, err := a.Release(sb, "eth0", "railnet"); err != nil {
			t.Fatal(err)
		}
	}
	a.Close()
	b := reopen(t, path, pools, opt)
	l, err := b.Allocate(request("sb9", "rail0", "p"))
	if err != nil || l.Address.Addr().String() != "10.0.0.5" {
		t.Errorf("Allocate after reopen = %v, %v; want 10.0.0.5, after the newest lease", l.Address, err)
	}
}

// Cooldowns that expire while the allocator runs are deleted from the file
// with a later write.
func TestExpiredCooldownsPurgedWhileRunning(t *testing.T) {
	clock := newFakeClock()
	pools := mustPools(t, []PoolConfig{{Name: "p", Subnet: "10.0.0.0/24"}}, "n1")
	opt := Options{Cooldown: time.Minute, Now: clock.Now}
	a, path := openTest(t, pools, opt)
	for i := range 5 {
		sb := fmt.Sprint("sb", i)
		if _, err := a.Allocate(request(sb, "rail0", "p")); err != nil {
			t.Fatal(err)
		}
		if _, err := a.Release(sb, "eth0", "railnet"); err != nil {
			t.Fatal(err)
		}
	}
	clock.Advance(time.Minute)
	if _, err := a.Allocate(request("late", "rail0", "p")); err != nil {
		t.Fatal(err)
	}
	a.Close()
	if got := coolingOnDisk(t, path); len(got) != 0 {
		t.Errorf("cooldowns on disk after expiry and a write: %v, want none", got)
	}
}

func TestReopenWithChangedConfig(t *testing.T) {
	path := filepath.Join(t.TempDir(), "leases.db")
	old := mustPools(t, []PoolConfig{{Name: "gone", Subnet: "10.0.0.0/24"}}, "n1")
	a := reopen(t, path, old, Options{})
	l, err := a.Allocate(request("sb1", "rail0", "gone"))
	if err != nil {
		t.Fatal(err)
	}
	a.Close()
	// the pool is renamed over the same subnet: the old lease still holds its address
	renamed := mustPools(t, []PoolConfig{{Name: "new", Subnet: "10.0.0.0/24"}}, "n1")
	b := reopen(t, path, renamed, Options{})
	if got := b.Leases(); len(got) != 1 || got[0].Pool != "gone" {
		t.Fatalf("leases = %v, want the lease of the removed pool kept", got)
	}
	n, err := b.Allocate(request("sb2", "rail0", "new"))
	if err != nil || n.Address.Addr() == l.Address.Addr() {
		t.Errorf("Allocate = %v, %v; want an address other than %s", n.Address, err, l.Address)
	}
	if freed, err := b.ReleaseSandbox("sb1"); err != nil || len(freed) != 1 {
		t.Errorf("ReleaseSandbox of the orphan = %v, %v", freed, err)
	}
}
