package ipam

import (
	"errors"
	"fmt"
	"net/netip"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/railcni/rail/ipam/store"
)

// putLeases writes leases straight into a store, sealed as raild seals
// them, bypassing the allocator's checks.
func putLeases(t *testing.T, path string, leases ...Lease) {
	t.Helper()
	st, _, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ses := st.Begin()
	for _, l := range leases {
		if err := ses.PutLease(l); err != nil {
			t.Fatal(err)
		}
	}
	if err := ses.Commit(); err != nil {
		t.Fatal(err)
	}
}

var damagePools = []PoolConfig{{Name: "p", Subnet: "10.8.0.0/22"}}

// openNoPanic opens the allocator and turns a panic into a test failure
// with the value, so the table goes on with the next case.
func openNoPanic(t *testing.T, path string) (a *Allocator, err error) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("Open panicked: %v", r)
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return Open(path, mustPools(t, damagePools, "n1"), Options{Cooldown: time.Hour})
}

func storedLease(sandbox, pool, addr string) Lease {
	return Lease{Sandbox: sandbox, IfName: "rail0", CNIIfName: "eth0", Network: "railnet", Pool: pool,
		Address: netip.MustParsePrefix(addr), Created: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)}
}

// TestLoadRefusesImpossibleLeases: records that are intact but cannot all
// be true refuse the store at load: as damaged when they contradict each
// other, as a changed pool when a lease lies outside its pool's subnet.
func TestLoadRefusesImpossibleLeases(t *testing.T) {
	tests := []struct {
		name    string
		leases  []Lease
		want    string // "" : opens
		damaged bool   // want a DamagedError, else an OutsidePoolError
	}{
		{"one address, two leases", []Lease{storedLease("sb1", "p", "10.8.0.5/22"), storedLease("sb2", "p", "10.8.0.5/22")}, "leased twice", true},
		{"one address, two pools", []Lease{storedLease("sb1", "p", "10.8.0.5/22"), storedLease("sb2", "gone", "10.8.0.5/22")}, "leased twice", true},
		{"outside its pool's subnet", []Lease{storedLease("sb1", "p", "10.9.0.5/22")}, "outside pool", false},
		{"other family than its pool", []Lease{storedLease("sb1", "p", "fd00::5/64")}, "outside pool", false},
		{"longer prefix than its pool, inside it", []Lease{storedLease("sb1", "p", "10.8.0.5/24")}, "", false},
		{"shorter prefix than its pool, inside it", []Lease{storedLease("sb1", "p", "10.8.0.5/16")}, "", false},
		{"pool no longer configured", []Lease{storedLease("sb1", "gone", "10.99.0.5/24")}, "", false},
		{"distinct addresses", []Lease{storedLease("sb1", "p", "10.8.0.5/22"), storedLease("sb2", "p", "10.8.0.6/22")}, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "leases.db")
			putLeases(t, path, tt.leases...)
			a, err := openNoPanic(t, path)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Open: %v", err)
				}
				a.Close()
				return
			}
			if err == nil {
				a.Close()
				t.Fatal("Open succeeded")
			}
			var outside *OutsidePoolError
			if errors.Is(err, ErrDamaged) != tt.damaged || (!tt.damaged && !errors.As(err, &outside)) {
				t.Errorf("error %q: damaged %v, want %v", err, errors.Is(err, ErrDamaged), tt.damaged)
			}
			if !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), path) {
				t.Errorf("error %q: want %s and %q in it", err, path, tt.want)
			}
		})
	}
}

// TestPoolSubnetChanged changes a pool's subnet between runs (issue 20
// L7): shrunk (/24 to /25) with every lease still inside, the store opens,
// the leases keep their prefix and new ones get the pool's; shrunk past a
// lease, the refusal names the changed subnet, not damage.
func TestPoolSubnetChanged(t *testing.T) {
	wide := mustPools(t, []PoolConfig{{Name: "p", Subnet: "10.0.0.0/24"}}, "n1")
	a, path := openTest(t, wide, Options{})
	for i := range 5 {
		if _, err := a.Allocate(request(fmt.Sprint("sb", i), "rail0", "p")); err != nil {
			t.Fatal(err)
		}
	}
	before := a.Leases()
	a.Close()

	shrunk := mustPools(t, []PoolConfig{{Name: "p", Subnet: "10.0.0.0/25"}}, "n1")
	b, err := Open(path, shrunk, Options{})
	if err != nil {
		t.Fatalf("Open with the pool shrunk to /25, every lease inside: %v", err)
	}
	if got := b.Leases(); !reflect.DeepEqual(addrsOf(got), addrsOf(before)) || got[0].Address.Bits() != 24 {
		t.Errorf("leases after the shrink %v, want %v kept as they were", got, before)
	}
	l, err := b.Allocate(request("new", "rail0", "p"))
	if err != nil || l.Address.Bits() != 25 || slices.ContainsFunc(before, func(o Lease) bool { return o.Address.Addr() == l.Address.Addr() }) {
		t.Errorf("allocation after the shrink: %v, %v; want a free /25 address", l.Address, err)
	}
	b.Close()

	tiny := mustPools(t, []PoolConfig{{Name: "p", Subnet: "10.0.0.0/30"}}, "n1")
	_, err = Open(path, tiny, Options{DamagedHint: "recover"})
	var outside *OutsidePoolError
	if !errors.As(err, &outside) || errors.Is(err, ErrDamaged) || strings.Contains(err.Error(), "damaged") || strings.Contains(err.Error(), "recover") ||
		!strings.Contains(err.Error(), "10.0.0.0/30") || !strings.Contains(err.Error(), "subnet was changed") {
		t.Errorf("Open with the pool shrunk past its leases = %v, want an OutsidePoolError naming the new subnet, not damage", err)
	}
}

// TestHealthFollowsWrites makes the store unable to write (RLIMIT_FSIZE 0:
// every write to a file fails with EFBIG) and back: Health says why while writes fail, and is
// nil again once a write can succeed, without waiting for an allocation.
func TestHealthFollowsWrites(t *testing.T) {
	a, path := openTest(t, mustPools(t, damagePools, "n1"), Options{})
	if err := a.Health(); err != nil {
		t.Fatalf("Health of a fresh store: %v", err)
	}
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		t.Fatal(err)
	}
	limit := old
	limit.Cur = 0
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &limit); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old) })
	if _, err := a.Allocate(request("sb1", "rail0", "p")); err == nil {
		t.Fatal("Allocate succeeded on a store that cannot write")
	}
	health := a.Health()
	if health == nil || !strings.Contains(health.Error(), "cannot write") || !strings.Contains(health.Error(), path) {
		t.Fatalf("Health after a failed write = %v, want the file and why", health)
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		t.Fatal(err)
	}
	if err := a.Health(); err != nil {
		t.Errorf("Health once the disk takes writes again = %v, want nil", err)
	}
	a.Close()
	if err := a.Health(); !errors.Is(err, ErrClosed) {
		t.Errorf("Health after Close = %v, want ErrClosed", err)
	}
}
