package ipam

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
)

// openTimeout bounds the wait for the file lock of another raild.
const openTimeout = time.Second

// coolRecord is a released address waiting for the cooldown.
type coolRecord struct {
	Pool     string    `json:"pool"`
	Released time.Time `json:"released"`
}

type kv struct{ k, v []byte }

// writeOp is one change of the store, applied in one transaction (possibly
// shared with other ops by DB.Batch). apply is idempotent: Batch may run it
// twice.
type writeOp struct {
	putLeases  []kv
	delLeases  [][]byte
	putCooling []kv
	delCooling [][]byte
	purge      []kv // delete cooling k only if it still holds v
	probe      bool // commit even without changes (a write test)

	seq uint64 // set by apply: the commit sequence this op's transaction wrote
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
	for _, p := range op.purge {
		if !bytes.Equal(cooling.Get(p.k), p.v) {
			continue
		}
		if err := cooling.Delete(p.k); err != nil {
			return fmt.Errorf("purge cooldown: %w", err)
		}
	}
	for _, p := range op.putCooling {
		if err := cooling.Put(p.k, p.v); err != nil {
			return fmt.Errorf("put cooldown: %w", err)
		}
	}
	return op.bumpSeq(tx)
}

// bumpSeq counts the commit: every transaction raises the sequence, which
// the side record then follows.
func (op *writeOp) bumpSeq(tx *bolt.Tx) error {
	meta := tx.Bucket([]byte(bucketMeta))
	op.seq = binary.BigEndian.Uint64(meta.Get([]byte(metaSeq))) + 1
	if err := meta.Put([]byte(metaSeq), binary.BigEndian.AppendUint64(nil, op.seq)); err != nil {
		return fmt.Errorf("put commit sequence: %w", err)
	}
	return nil
}

// store is the bbolt file and its side record.
type store struct {
	db       *bolt.DB
	path     string
	seq      *seqFile
	inflight atomic.Int32 // writes in progress

	mu       sync.Mutex
	writeErr error // the last write's failure; nil once a write succeeds
}

// commit makes op durable. A lone writer commits at once; concurrent
// writers share transactions (and fsyncs) through DB.Batch.
func (s *store) commit(op *writeOp) error {
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

func (s *store) close() error {
	err := s.seq.close()
	if cerr := s.db.Close(); cerr != nil {
		err = errors.Join(err, fmt.Errorf("ipam: close %s: %w", s.path, cerr))
	}
	return err
}

func encodeLease(l Lease) (kv, error) {
	v, err := json.Marshal(l)
	if err != nil {
		return kv{}, fmt.Errorf("ipam: encode lease %s/%s: %w", l.Sandbox, l.IfName, err)
	}
	return kv{k: l.Key().bytes(), v: sealRecord(v)}, nil
}

func encodeCooling(addr netip.Addr, rec coolRecord) (kv, error) {
	v, err := json.Marshal(rec)
	if err != nil {
		return kv{}, fmt.Errorf("ipam: encode cooldown %s: %w", addr, err)
	}
	return kv{k: []byte(addr.String()), v: sealRecord(v)}, nil
}
