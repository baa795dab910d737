package ipam

import (
	"encoding/json"
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// putLeases writes leases straight into a store, sealed as raild seals
// them, bypassing the allocator's checks.
func putLeases(t *testing.T, path string, leases ...Lease) {
	t.Helper()
	st, _, err := openStore(path, time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer st.close()
	op := &writeOp{}
	for _, l := range leases {
		rec, err := encodeLease(l)
		if err != nil {
			t.Fatal(err)
		}
		op.putLeases = append(op.putLeases, rec)
	}
	if err := st.commit(op); err != nil {
		t.Fatal(err)
	}
}

func storedLease(sandbox, pool, addr string) Lease {
	return Lease{Sandbox: sandbox, IfName: "rail0", CNIIfName: "eth0", Network: "railnet", Pool: pool,
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

// writeFormat1 makes a lease file as the first raild wrote it: JSON
// records without checksums, no commit sequence, no side record.
func writeFormat1(t *testing.T, path string, leases []Lease, cools map[string]coolRecord) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(tx *bolt.Tx) error {
		lb, _ := tx.CreateBucket([]byte(bucketLeases))
		cb, _ := tx.CreateBucket([]byte(bucketCooling))
		mb, _ := tx.CreateBucket([]byte(bucketMeta))
		for _, l := range leases {
			v, _ := json.Marshal(l)
			if err := lb.Put(l.Key().bytes(), v); err != nil {
				return err
			}
		}
		for addr, rec := range cools {
			v, _ := json.Marshal(rec)
			if err := cb.Put([]byte(addr), v); err != nil {
				return err
			}
		}
		return mb.Put([]byte(metaVersion), []byte(legacyFormat))
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestOpenConvertsFormat1(t *testing.T) {
	path := filepath.Join(t.TempDir(), "leases.db")
	leases := []Lease{storedLease("sb1", "p", "10.8.0.5/22"), storedLease("sb2", "p", "10.8.0.6/22")}
	clock := newFakeClock()
	writeFormat1(t, path, leases, map[string]coolRecord{"10.8.0.7": {Pool: "p", Released: clock.Now()}})
	older, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pools := mustPools(t, damagePools, "n1")
	opt := Options{Cooldown: time.Hour, Now: clock.Now}
	for round := range 2 { // converted, then opened as format 2
		a := reopen(t, path, pools, opt)
		if got := a.Leases(); !sameLeases(got, leases) {
			t.Fatalf("round %d: leases %v, want %v", round, got, leases)
		}
		if st := a.Stats()[0]; st.Used != 2 || st.Cooling != 1 {
			t.Errorf("round %d: stats %+v, want 2 used and 1 cooling", round, st)
		}
		a.Close()
	}
	if _, exists, err := readSeq(seqPath(path)); !exists || err != nil {
		t.Fatalf("side record after conversion: exists %v, %v", exists, err)
	}
	if err := os.WriteFile(path, older, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := openNoPanic(t, path); !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "rolled back") {
		t.Errorf("format 1 copy put back beside a side record: %v, want rolled back", err)
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
