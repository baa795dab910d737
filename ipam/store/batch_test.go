package store

import (
	"fmt"
	"net/netip"
	"path/filepath"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// commitsSoFar is the file's transaction ID: it grows by one per commit.
func commitsSoFar(t *testing.T, st *Store) int {
	t.Helper()
	var id int
	if err := st.db.View(func(tx *bolt.Tx) error { id = tx.ID(); return nil }); err != nil {
		t.Fatal(err)
	}
	return id
}

// A burst of 100 concurrent sessions shares commits instead of paying one
// fsync each.
func TestBurstIsBatched(t *testing.T) {
	st, _, err := Open(filepath.Join(t.TempDir(), "leases.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	before := commitsSoFar(t, st)
	start := make(chan struct{})
	var wg sync.WaitGroup
	addr := netip.MustParseAddr("10.0.0.0")
	for i := range 100 {
		addr = addr.Next()
		l := testLease(fmt.Sprint("sb", i), netip.PrefixFrom(addr, 24), time.Now())
		wg.Go(func() {
			<-start
			ses := st.Begin()
			if err := ses.PutLease(l); err != nil {
				t.Error(err)
			}
			if err := ses.Commit(); err != nil {
				t.Error(err)
			}
		})
	}
	close(start)
	wg.Wait()
	commits := commitsSoFar(t, st) - before
	st.Close()
	c, err := openNoPanic(t, st.Path())
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Leases) != 100 || commits > 50 {
		t.Errorf("100 concurrent sessions: %d leases in %d commits, want 100 in at most 50", len(c.Leases), commits)
	}
	t.Logf("100 concurrent sessions in %d commits", commits)
}
