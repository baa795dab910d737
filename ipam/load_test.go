package ipam

import (
	"errors"
	"fmt"
	"net/netip"
	"path/filepath"
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
	return Lease{Sandbox: sandbox, IfName: "rail0", Attachment: "eth0", Network: "railnet", Pool: pool,
		Address: netip.MustParsePrefix(addr), Created: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)}
}

// TestLoadRefusesImpossibleLeases: records that are intact but cannot all
// be true refuse the store at load.
func TestLoadRefusesImpossibleLeases(t *testing.T) {
	tests := []struct {
		name   string
		leases []Lease
		want   string // "" : opens
	}{
		{"one address, two leases", []Lease{storedLease("sb1", "p", "10.8.0.5/22"), storedLease("sb2", "p", "10.8.0.5/22")}, "leased twice"},
		{"one address, two pools", []Lease{storedLease("sb1", "p", "10.8.0.5/22"), storedLease("sb2", "gone", "10.8.0.5/22")}, "leased twice"},
		{"outside its pool's subnet", []Lease{storedLease("sb1", "p", "10.9.0.5/22")}, "outside pool"},
		{"other prefix length than its pool", []Lease{storedLease("sb1", "p", "10.8.0.5/24")}, "outside pool"},
		{"other family than its pool", []Lease{storedLease("sb1", "p", "fd00::5/64")}, "outside pool"},
		{"pool no longer configured", []Lease{storedLease("sb1", "gone", "10.99.0.5/24")}, ""},
		{"distinct addresses", []Lease{storedLease("sb1", "p", "10.8.0.5/22"), storedLease("sb2", "p", "10.8.0.6/22")}, ""},
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
			if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), path) {
				t.Errorf("error %q: want a DamagedError naming %s with %q", err, path, tt.want)
			}
		})
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
