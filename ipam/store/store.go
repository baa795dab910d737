package store

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
)

// openTimeout bounds the wait for the file lock of another raild.
const openTimeout = time.Second

// DefaultStuckAfter is how long a write may run before the store calls
// itself stuck (Options.StuckAfter).
const DefaultStuckAfter = 30 * time.Second

// Options tune a Store.
type Options struct {
	// DamagedHint is appended to every DamagedError of the store (at open
	// and while it runs): what the user should do, e.g. the command that
	// rebuilds the leases.
	DamagedHint string
	// StuckAfter is how long one write may take before Health reports the
	// store stuck and new writes are refused instead of queued behind it.
	// 0: DefaultStuckAfter.
	StuckAfter time.Duration
}

// Store is the lease file (bbolt) and its side record. Changes go through
// a Session; reads are what Open returned (the caller keeps its own index).
// One writer goroutine makes every commit: a lone session commits at once,
// sessions that arrive while a commit is under way share the next one (one
// transaction, one fsync). It is safe for concurrent use.
type Store struct {
	db   *bolt.DB
	file *os.File // bbolt's descriptor: closed alone when bbolt cannot be trusted to close
	path string
	seq  *seqFile
	opt  Options

	writes chan *pending
	quit   chan struct{} // closed by Close
	ended  chan struct{} // closed when the writer goroutine returns

	// the writer goroutine's own: what it last committed
	lastTx  int
	lastSeq uint64

	mu        sync.Mutex
	closed    bool
	writeErr  error         // the last write's failure; nil once a write succeeds
	damage    *DamagedError // set once the file is found damaged: no write reaches bbolt again
	busySince time.Time     // start of the write under way; zero when none
}

// pending is one session waiting for the writer.
type pending struct {
	op   *writeOp
	done chan result
}

// result is what the writer did with a session: its error, nil once the
// commit that made it durable returned.
type result struct {
	err error
}

// Path is the lease file.
func (s *Store) Path() string { return s.path }

func (s *Store) start(lastTx int, lastSeq uint64) {
	s.writes, s.quit, s.ended = make(chan *pending), make(chan struct{}), make(chan struct{})
	s.lastTx, s.lastSeq = lastTx, lastSeq
	go s.writer()
}

// commit makes op durable: it hands op to the writer and waits for its
// transaction. A store found damaged, or stuck in a write, refuses at once.
func (s *Store) commit(op *writeOp) error {
	if op.empty() {
		return nil
	}
	if err := s.refusal(); err != nil {
		return err
	}
	p := &pending{op: op, done: make(chan result, 1)}
	select {
	case s.writes <- p:
	case <-s.quit:
		return fmt.Errorf("ipam: write %s: %w", s.path, errStoreClosed)
	}
	res := <-p.done
	// The session is durable once bbolt's commit is: the writer brings
	// the side record up to it after answering (writer.go).
	return res.err
}

// refusal is why a write must not reach bbolt now, if it must not.
func (s *Store) refusal() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.damage != nil:
		return fmt.Errorf("ipam: write refused: %w", s.damage)
	case s.closed:
		return fmt.Errorf("ipam: write %s: %w", s.path, errStoreClosed)
	case !s.busySince.IsZero() && time.Since(s.busySince) > s.opt.StuckAfter:
		return fmt.Errorf("ipam: write %s: %w", s.path, s.stuckErr())
	}
	return nil
}

func (s *Store) stuckErr() error {
	return fmt.Errorf("a write has been under way for %s (more than %s): the disk or the file does not answer; restart raild once it does",
		time.Since(s.busySince).Round(time.Second), s.opt.StuckAfter)
}

var errStoreClosed = errors.New("lease store closed")

// Close stops the writer and closes the file and its side record. A store
// whose bbolt panicked, or whose write is stuck, has only its descriptors
// closed: bbolt's own Close would wait for locks that are never released.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	close(s.quit)
	select {
	case <-s.ended:
	case <-time.After(s.opt.StuckAfter):
	}
	s.mu.Lock()
	abandon := (s.damage != nil && s.damage.fault) || !s.busySince.IsZero()
	s.mu.Unlock()
	err := s.seq.close()
	if abandon {
		_ = s.file.Close()
		return err
	}
	if cerr := s.db.Close(); cerr != nil {
		err = errors.Join(err, fmt.Errorf("ipam: close %s: %w", s.path, cerr))
	}
	return err
}
