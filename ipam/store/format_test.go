package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

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
	at := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	leases := []Lease{testLease("sb1", netip.MustParsePrefix("10.8.0.5/22"), at), testLease("sb2", netip.MustParsePrefix("10.8.0.6/22"), at)}
	cools := []Cooldown{{Addr: netip.MustParseAddr("10.8.0.7"), Pool: "p", Released: at}}
	writeFormat1(t, path, leases, map[string]coolRecord{"10.8.0.7": {Pool: "p", Released: at}})
	older, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for round := range 2 { // converted, then opened as format 2
		st, c, err := Open(path, Options{})
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if !sameLeases(c.Leases, leases) {
			t.Errorf("round %d: leases %v, want %v", round, c.Leases, leases)
		}
		if fmt.Sprint(c.Cooldowns) != fmt.Sprint(cools) {
			t.Errorf("round %d: cooldowns %v, want %v", round, c.Cooldowns, cools)
		}
		st.Close()
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
