package store

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"

	bolt "go.etcd.io/bbolt"
)

// Session is one change of the store: the leases and cooldowns to write
// or delete, collected by its methods and made durable together, in one
// transaction, by Commit — or dropped by Cancel. Nothing reaches the file
// before Commit. A session is used by one goroutine; after Commit or
// Cancel it is closed and its methods fail.
type Session struct {
	st     *Store
	op     writeOp
	closed bool
}

// errSessionClosed is returned by a session used after Commit or Cancel.
var errSessionClosed = errors.New("ipam: lease store session already committed or cancelled")

// Begin opens a session.
func (s *Store) Begin() *Session { return &Session{st: s} }

// PutLease writes l (replacing the lease of its key).
func (s *Session) PutLease(l Lease) error {
	if s.closed {
		return errSessionClosed
	}
	rec, err := encodeLease(l)
	if err != nil {
		return err
	}
	s.op.putLeases = append(s.op.putLeases, rec)
	return nil
}

// DeleteLease deletes the lease of k.
func (s *Session) DeleteLease(k Key) {
	if s.closed {
		return
	}
	s.op.delLeases = append(s.op.delLeases, k.bytes())
}

// PutCooldown records c, replacing the cooldown of its address.
func (s *Session) PutCooldown(c Cooldown) error {
	if s.closed {
		return errSessionClosed
	}
	rec, err := encodeCooling(c)
	if err != nil {
		return err
	}
	s.op.putCooling = append(s.op.putCooling, rec)
	return nil
}

// DeleteCooldown deletes the cooldown of addr.
func (s *Session) DeleteCooldown(addr netip.Addr) {
	if s.closed {
		return
	}
	s.op.delCooling = append(s.op.delCooling, []byte(addr.String()))
}

// PurgeCooldown deletes the cooldown of c.Addr only if the file still holds
// c (not a later release of the same address).
func (s *Session) PurgeCooldown(c Cooldown) {
	if s.closed {
		return
	}
	s.op.purge = append(s.op.purge, c)
}

// Commit makes the session's changes durable, all or none, and closes the
// session. A session without changes commits nothing.
func (s *Session) Commit() error {
	if s.closed {
		return errSessionClosed
	}
	s.closed = true
	return s.st.commit(&s.op)
}

// Cancel drops the session's changes and closes it; after Commit it does
// nothing.
func (s *Session) Cancel() { s.closed = true }

// probe commits a transaction without changes: a test that the store can
// write.
func (s *Store) probe() error { return s.commit(&writeOp{probe: true}) }

type kv struct{ k, v []byte }

// writeOp is one session's change of the store, applied in one
// transaction (possibly shared with other sessions).
type writeOp struct {
	putLeases  []kv
	delLeases  [][]byte
	putCooling []kv
	delCooling [][]byte
	purge      []Cooldown // delete the cooldown only if it is still this one
	probe      bool       // commit even without changes (a write test)
}

func (op *writeOp) empty() bool {
	return !op.probe && len(op.putLeases)+len(op.delLeases)+len(op.putCooling)+len(op.delCooling)+len(op.purge) == 0
}

func (op *writeOp) apply(tx *bolt.Tx) error {
	leases, cooling := tx.Bucket([]byte(bucketLeases)), tx.Bucket([]byte(bucketCooling))
	for _, k := range op.delLeases {
		if err := leases.Delete(k); err != nil {
			return fmt.Errorf("delete lease: %w", err)
		}
	}
	for _, p := range op.putLeases {
		if err := leases.Put(p.k, p.v); err != nil {
			return fmt.Errorf("put lease: %w", err)
		}
	}
	for _, k := range op.delCooling {
		if err := cooling.Delete(k); err != nil {
			return fmt.Errorf("delete cooldown: %w", err)
		}
	}
	for _, c := range op.purge {
		k := []byte(c.Addr.String())
		if !holds(cooling.Get(k), c) {
			continue
		}
		if err := cooling.Delete(k); err != nil {
			return fmt.Errorf("purge cooldown: %w", err)
		}
	}
	for _, p := range op.putCooling {
		if err := cooling.Put(p.k, p.v); err != nil {
			return fmt.Errorf("put cooldown: %w", err)
		}
	}
	return nil
}

// applyAll applies ops in one transaction and records it as commit seq.
func applyAll(tx *bolt.Tx, ops []*writeOp, seq uint64) error {
	for _, op := range ops {
		if err := op.apply(tx); err != nil {
			return err
		}
	}
	return putSeq(tx, seq)
}

// holds reports whether the cooldown record v is c.
func holds(v []byte, c Cooldown) bool {
	if v == nil {
		return false
	}
	payload, err := unsealRecord(v)
	if err != nil {
		return false
	}
	var rec coolRecord
	return json.Unmarshal(payload, &rec) == nil && rec.Pool == c.Pool && rec.Released.Equal(c.Released)
}

// putSeq counts the commit: every transaction raises the sequence, which
// the side record then follows.
func putSeq(tx *bolt.Tx, seq uint64) error {
	if err := tx.Bucket([]byte(bucketMeta)).Put([]byte(metaSeq), binary.BigEndian.AppendUint64(nil, seq)); err != nil {
		return fmt.Errorf("put commit sequence: %w", err)
	}
	return nil
}

func encodeLease(l Lease) (kv, error) {
	v, err := json.Marshal(l)
	if err != nil {
		return kv{}, fmt.Errorf("ipam: encode lease %s/%s: %w", l.Sandbox, l.IfName, err)
	}
	return kv{k: l.Key().bytes(), v: sealRecord(v)}, nil
}

func encodeCooling(c Cooldown) (kv, error) {
	v, err := json.Marshal(coolRecord{Pool: c.Pool, Released: c.Released})
	if err != nil {
		return kv{}, fmt.Errorf("ipam: encode cooldown %s: %w", c.Addr, err)
	}
	return kv{k: []byte(c.Addr.String()), v: sealRecord(v)}, nil
}
