package store

import (
	"net/netip"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestCommitDoesNotWaitForSideRecord: a session is answered once bbolt's
// commit is durable — one durable write — and the side record follows
// after the answer (before, every commit also waited for the side
// record's fdatasync: a second durable write on each ADD's path). Close
// returns with the side record holding the last commit, and the store
// opens again with every lease.
func TestCommitDoesNotWaitForSideRecord(t *testing.T) {
	path := filepath.Join(t.TempDir(), "leases.db")
	st, _, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	gate, syncing := make(chan struct{}), make(chan struct{}, 16)
	st.seq.sync = func(fd int) error {
		syncing <- struct{}{}
		<-gate
		return unix.Fdatasync(fd)
	}
	ses := st.Begin()
	if err := ses.PutLease(testLease("sb-1", netip.MustParsePrefix("10.0.0.1/24"), time.Now())); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- ses.Commit() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("commit: %v", err)
		}
	case <-time.After(20 * time.Second): // a hang guard, not a speed claim
		close(gate)
		t.Fatal("the commit waited for the side record's sync")
	}
	select {
	case <-syncing:
	case <-time.After(20 * time.Second):
		t.Fatal("the side record was never brought up to the commit")
	}
	close(gate)
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	side, _, err := readSeq(seqPath(path))
	if err != nil {
		t.Fatal(err)
	}
	c, err := openNoPanic(t, path)
	if err != nil {
		t.Fatalf("open again: %v", err)
	}
	if side != c.seq || len(c.Leases) != 1 {
		t.Errorf("after Close: side record %d, commit %d, %d leases; want the side record at the commit and 1 lease", side, c.seq, len(c.Leases))
	}
}
