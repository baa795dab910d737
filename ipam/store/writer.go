package store

import (
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// maxBatch bounds the sessions one transaction takes.
const maxBatch = 1000

// writer commits the sessions handed to it until Close: the first that
// comes, with every one that queued meanwhile (gather).
func (s *Store) writer() {
	defer close(s.ended)
	for {
		var batch []*pending
		select {
		case p := <-s.writes:
			batch = append(batch, p)
		case <-s.quit:
			return
		}
		s.write(s.gather(batch))
	}
}

// gather adds to batch the sessions queued meanwhile: those that came
// while the last transaction was being written share the next one.
func (s *Store) gather(batch []*pending) []*pending {
	for len(batch) < maxBatch {
		select {
		case p := <-s.writes:
			batch = append(batch, p)
		default:
			return batch
		}
	}
	return batch
}

// write commits batch in one transaction and answers its sessions, then
// brings the side record up to the commit. When the transaction fails for
// a reason of one session (not damage), each is tried alone so the others
// are not failed with it.
//
// A session waits for bbolt's commit only: one durable write (bbolt's
// pages, then its meta page, each made durable in turn). The side record
// (seq.go) follows after the answer, before the writer takes the next
// batch, so sessions that arrive meanwhile share the next commit and the
// record never lags more than the commit just answered; Close returns once
// it holds the last one. What that leaves open: a rollback of exactly the
// commit just answered (its meta page damaged after bbolt made it durable,
// or an older copy put back) in the moment before its side record is
// durable goes unnoticed at the next Open. A crash in that moment loses
// nothing: the commit is durable in leases.db.
func (s *Store) write(batch []*pending) {
	err := s.transact(batch)
	var damage *DamagedError
	if err != nil && len(batch) > 1 && !errors.As(err, &damage) {
		for _, p := range batch {
			s.write([]*pending{p})
		}
		return
	}
	for _, p := range batch {
		p.done <- result{err: err}
	}
	if err != nil {
		return
	}
	// A side record that cannot follow only weakens the rollback check:
	// the store is unhealthy, the sessions stay committed.
	if err := s.seq.cover(s.lastSeq); err != nil {
		s.setWriteErr(fmt.Errorf("ipam: %w", err))
	}
}

// transact checks the file, then runs one bbolt transaction applying the
// batch; a panic or memory fault inside bbolt, and any damage the checks
// find, make the store damaged for good.
func (s *Store) transact(batch []*pending) error {
	if err := s.refusal(); err != nil {
		return err
	}
	s.setBusy(time.Now())
	defer s.setBusy(time.Time{})
	ops := make([]*writeOp, len(batch))
	for i, p := range batch {
		ops[i] = p.op
	}
	err := s.checkBeforeWrite(ops)
	var txid int
	if err == nil {
		err = guard(s.path, func() error {
			return s.db.Update(func(tx *bolt.Tx) error {
				txid = tx.ID()
				return applyAll(tx, ops, s.lastSeq+1)
			})
		})
	}
	var damage *DamagedError
	if errors.As(err, &damage) {
		s.setDamaged(damage)
		return fmt.Errorf("ipam: write refused: %w", err)
	}
	if err != nil {
		err = fmt.Errorf("ipam: write %s: %w", s.path, err)
		s.setWriteErr(err)
		return err
	}
	s.lastTx, s.lastSeq = txid, s.lastSeq+1
	s.setWriteErr(nil)
	return nil
}

func (s *Store) setBusy(since time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.busySince = since
}

// setDamaged records the damage for good, with the store's hint.
func (s *Store) setDamaged(d *DamagedError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.damage == nil {
		d.Hint = s.opt.DamagedHint
		s.damage = d
	}
}
