package store

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
)

// openTimeout bounds the wait for the file lock of another raild.
const openTimeout = time.Second

// DefaultBatchDelay is how long a batch of concurrent writes waits for more
// writers before it commits (bbolt's MaxBatchDelay; bbolt's own default is 10ms).
const DefaultBatchDelay = 2 * time.Millisecond

// Store is the lease file (bbolt) and its side record. Changes go through
// a Session; reads are what Open returned (the caller keeps its own index).
// It is safe for concurrent use.
type Store struct {
	db       *bolt.DB
	path     string
	seq      *seqFile
	inflight atomic.Int32 // writes in progress

	mu       sync.Mutex
	writeErr error // the last write's failure; nil once a write succeeds
}

// Path is the lease file.
func (s *Store) Path() string { return s.path }

// commit makes op durable. A lone writer commits at once; concurrent
// writers share transactions (and fsyncs) through DB.Batch.
func (s *Store) commit(op *writeOp) error {
	if op.empty() {
		return nil
	}
	defer s.inflight.Add(-1)
	var err error
	if s.inflight.Add(1) == 1 {
		err = s.db.Update(op.apply)
	} else {
		err = s.db.Batch(op.apply)
	}
	if err != nil {
		err = fmt.Errorf("ipam: write %s: %w", s.path, err)
		s.setWriteErr(err)
		return err
	}
	// The op is durable; a side record that cannot follow only weakens the
	// rollback check, so it makes the store unhealthy, not the op failed.
	if err := s.seq.cover(op.seq); err != nil {
		s.setWriteErr(fmt.Errorf("ipam: %w", err))
		return nil
	}
	s.setWriteErr(nil)
	return nil
}

// Close closes the file and its side record.
func (s *Store) Close() error {
	err := s.seq.close()
	if cerr := s.db.Close(); cerr != nil {
		err = errors.Join(err, fmt.Errorf("ipam: close %s: %w", s.path, cerr))
	}
	return err
}
