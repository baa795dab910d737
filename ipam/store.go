package ipam

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
)

const (
	bucketLeases  = "leases"  // Key.bytes() → Lease JSON
	bucketCooling = "cooling" // address text → coolRecord JSON
	bucketMeta    = "meta"
	metaVersion   = "version"
	formatVersion = "1"
	openTimeout   = time.Second
)

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
}

func (op *writeOp) empty() bool {
	return len(op.putLeases)+len(op.delLeases)+len(op.putCooling)+len(op.delCooling)+len(op.purge) == 0
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
	return nil
}

// store is the bbolt file.
type store struct {
	db       *bolt.DB
	path     string
	inflight atomic.Int32 // writes in progress
}

func openStore(path string, batchDelay time.Duration) (*store, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("ipam: create state dir for %s: %w", path, err)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: openTimeout})
	if errors.Is(err, bolt.ErrTimeout) {
		return nil, fmt.Errorf("ipam: open %s: locked by another process (is raild already running?): %w", path, err)
	}
	if err != nil {
		return nil, fmt.Errorf("ipam: open %s: %w", path, err)
	}
	db.MaxBatchDelay = batchDelay
	if err := db.Update(initBuckets); err != nil {
		return nil, errors.Join(fmt.Errorf("ipam: %s: %w", path, err), db.Close())
	}
	return &store{db: db, path: path}, nil
}

func initBuckets(tx *bolt.Tx) error {
	for _, name := range []string{bucketLeases, bucketCooling, bucketMeta} {
		if _, err := tx.CreateBucketIfNotExists([]byte(name)); err != nil {
			return fmt.Errorf("create bucket %s: %w", name, err)
		}
	}
	meta := tx.Bucket([]byte(bucketMeta))
	switch v := meta.Get([]byte(metaVersion)); {
	case v == nil:
		return meta.Put([]byte(metaVersion), []byte(formatVersion))
	case string(v) != formatVersion:
		return fmt.Errorf("lease format version %q, this raild reads %q: use a matching raild or move the file away", v, formatVersion)
	}
	return nil
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
		return fmt.Errorf("ipam: write %s: %w", s.path, err)
	}
	return nil
}

type storedCooling struct {
	addr netip.Addr
	rec  coolRecord
	raw  []byte
}

// load reads every lease and cooldown record.
func (s *store) load() ([]Lease, []storedCooling, error) {
	var leases []Lease
	var cools []storedCooling
	err := s.db.View(func(tx *bolt.Tx) error {
		err := tx.Bucket([]byte(bucketLeases)).ForEach(func(k, v []byte) error {
			var l Lease
			if err := json.Unmarshal(v, &l); err != nil {
				return fmt.Errorf("lease %q: decode: %w", k, err)
			}
			leases = append(leases, l)
			return nil
		})
		if err != nil {
			return err
		}
		return tx.Bucket([]byte(bucketCooling)).ForEach(func(k, v []byte) error {
			addr, err := netip.ParseAddr(string(k))
			if err != nil {
				return fmt.Errorf("cooldown %q: decode address: %w", k, err)
			}
			var rec coolRecord
			if err := json.Unmarshal(v, &rec); err != nil {
				return fmt.Errorf("cooldown %s: decode: %w", addr, err)
			}
			cools = append(cools, storedCooling{addr: addr, rec: rec, raw: bytes.Clone(v)})
			return nil
		})
	})
	if err != nil {
		return nil, nil, fmt.Errorf("ipam: read %s: %w", s.path, err)
	}
	return leases, cools, nil
}

func (s *store) close() error {
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("ipam: close %s: %w", s.path, err)
	}
	return nil
}

func encodeLease(l Lease) (kv, error) {
	v, err := json.Marshal(l)
	if err != nil {
		return kv{}, fmt.Errorf("ipam: encode lease %s/%s: %w", l.Sandbox, l.IfName, err)
	}
	return kv{k: l.Key().bytes(), v: v}, nil
}

func encodeCooling(addr netip.Addr, rec coolRecord) (kv, error) {
	v, err := json.Marshal(rec)
	if err != nil {
		return kv{}, fmt.Errorf("ipam: encode cooldown %s: %w", addr, err)
	}
	return kv{k: []byte(addr.String()), v: v}, nil
}
