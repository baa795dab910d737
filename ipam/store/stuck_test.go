package store

import (
	"net/netip"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestStuckWrite holds bbolt's write lock (a write transaction of the
// test's own) so the store's write cannot finish: past StuckAfter, Health
// says the store is stuck and new writes are refused at once instead of
// queueing; once the lock is released the write completes and the store
// is healthy again; closed while stuck, Close returns.
func TestStuckWrite(t *testing.T) {
	for _, closeStuck := range []bool{false, true} {
		t.Run(map[bool]string{false: "released", true: "closed while stuck"}[closeStuck], func(t *testing.T) {
			stuckWrite(t, closeStuck)
		})
	}
}

func stuckWrite(t *testing.T, closeStuck bool) {
	st, _, err := Open(filepath.Join(t.TempDir(), "leases.db"), Options{StuckAfter: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	blocker, err := st.db.Begin(true)
	if err != nil {
		t.Fatal(err)
	}
	first := make(chan error, 1)
	go func() {
		ses := st.Begin()
		if err := ses.PutLease(testLease("sb1", netip.MustParsePrefix("10.0.0.1/24"), time.Now())); err != nil {
			first <- err
			return
		}
		first <- ses.Commit()
	}()
	deadline := time.Now().Add(10 * time.Second)
	for st.Health() == nil && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if h := st.Health(); h == nil || !strings.Contains(h.Error(), "under way") {
		t.Fatalf("Health with a write stuck: %v, want stuck", h)
	}
	start := time.Now()
	ses := st.Begin()
	if err := ses.PutLease(testLease("sb2", netip.MustParsePrefix("10.0.0.2/24"), time.Now())); err != nil {
		t.Fatal(err)
	}
	if err := ses.Commit(); err == nil || !strings.Contains(err.Error(), "under way") || time.Since(start) > 5*time.Second {
		t.Errorf("a write behind a stuck one: %v after %s, want refused at once", err, time.Since(start))
	}
	if closeStuck {
		closed := make(chan error, 1)
		go func() { closed <- st.Close() }()
		select {
		case <-closed:
		case <-time.After(10 * time.Second):
			t.Fatal("Close with a stuck write did not return")
		}
		blocker.Rollback()
		<-first
		return
	}
	if err := blocker.Rollback(); err != nil {
		t.Fatal(err)
	}
	if err := <-first; err != nil {
		t.Errorf("the stuck write, once unblocked: %v", err)
	}
	if h := st.Health(); h != nil {
		t.Errorf("Health after the stuck write finished: %v", h)
	}
}
