package store

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/netip"
	"runtime/debug"
	"strings"

	bolt "go.etcd.io/bbolt"
)

const (
	bucketLeases  = "leases"  // Key.bytes() → sealed Lease JSON
	bucketCooling = "cooling" // address text → sealed coolRecord JSON
	bucketMeta    = "meta"
	metaVersion   = "version" // formatVersion
	metaSeq       = "seq"     // commit sequence, uint64 big endian
)

// Contents is everything a store holds, as Open read it.
type Contents struct {
	Leases    []Lease
	Cooldowns []Cooldown

	version string
	seq     uint64
	txid    int // the transaction that wrote it
}

// guard runs fn with bbolt's panics, and memory faults on the file's
// mapping (a file truncated under it), turned into a *DamagedError.
func guard(path string, fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &DamagedError{Path: path, Problem: "damaged: bbolt failed reading it: " + oneLine(fmt.Sprint(r)), fault: true}
		}
	}()
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	return fn()
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// readContents decodes every record; anything that is not exactly what
// raild writes is a *DamagedError naming the record.
func readContents(tx *bolt.Tx, path string) (*Contents, error) {
	c := &Contents{txid: tx.ID()}
	err := tx.ForEach(func(name []byte, _ *bolt.Bucket) error {
		switch string(name) {
		case bucketLeases, bucketCooling, bucketMeta:
			return nil
		}
		return Damaged(path, "damaged: unknown bucket %q", name)
	})
	if err != nil {
		return nil, err
	}
	meta := tx.Bucket([]byte(bucketMeta))
	if meta == nil {
		return c, nil // a bbolt file raild never initialised: upgraded like format 1
	}
	if c.version, c.seq, err = readMeta(meta, path); err != nil {
		return nil, err
	}
	if c.Leases, err = readLeases(tx.Bucket([]byte(bucketLeases)), c.version, path); err != nil {
		return nil, err
	}
	c.Cooldowns, err = readCooling(tx.Bucket([]byte(bucketCooling)), c.version, path)
	return c, err
}

func readMeta(meta *bolt.Bucket, path string) (version string, seq uint64, err error) {
	version = string(meta.Get([]byte(metaVersion)))
	switch version {
	case legacyFormat:
		return version, 0, nil
	case formatVersion:
	default:
		return "", 0, fmt.Errorf("ipam: %s: lease format version %q, this raild reads %q: use a matching raild or move the file away", path, version, formatVersion)
	}
	raw := meta.Get([]byte(metaSeq))
	if len(raw) != 8 {
		return "", 0, Damaged(path, "damaged: commit sequence is %d bytes, want 8", len(raw))
	}
	return version, binary.BigEndian.Uint64(raw), nil
}

func readLeases(b *bolt.Bucket, version, path string) ([]Lease, error) {
	if b == nil {
		return nil, Damaged(path, "damaged: bucket %q is missing", bucketLeases)
	}
	var leases []Lease
	err := b.ForEach(func(k, v []byte) error {
		l, err := decodeLease(k, v, version)
		if err != nil {
			return Damaged(path, "damaged: lease record %s: %v", describeKey(k), err)
		}
		leases = append(leases, l)
		return nil
	})
	return leases, err
}

func decodeLease(k, v []byte, version string) (Lease, error) {
	payload, err := recordPayload(v, version)
	if err != nil {
		return Lease{}, err
	}
	var l Lease
	if err := json.Unmarshal(payload, &l); err != nil {
		return Lease{}, fmt.Errorf("decode: %w", err)
	}
	switch {
	case !bytes.Equal(l.Key().bytes(), k):
		return Lease{}, fmt.Errorf("holds the lease of %s/%s", l.Sandbox, l.IfName)
	case l.Sandbox == "" || l.IfName == "":
		return Lease{}, fmt.Errorf("no sandbox or interface name")
	case !l.Address.IsValid():
		return Lease{}, fmt.Errorf("no valid address")
	}
	return l, nil
}

func readCooling(b *bolt.Bucket, version, path string) ([]Cooldown, error) {
	if b == nil {
		return nil, Damaged(path, "damaged: bucket %q is missing", bucketCooling)
	}
	var cools []Cooldown
	err := b.ForEach(func(k, v []byte) error {
		c, err := decodeCooling(k, v, version)
		if err != nil {
			return Damaged(path, "damaged: cooldown record %q: %v", k, err)
		}
		cools = append(cools, c)
		return nil
	})
	return cools, err
}

func decodeCooling(k, v []byte, version string) (Cooldown, error) {
	addr, err := netip.ParseAddr(string(k))
	if err != nil {
		return Cooldown{}, fmt.Errorf("decode address: %w", err)
	}
	payload, err := recordPayload(v, version)
	if err != nil {
		return Cooldown{}, err
	}
	var rec coolRecord
	if err := json.Unmarshal(payload, &rec); err != nil {
		return Cooldown{}, fmt.Errorf("decode: %w", err)
	}
	return Cooldown{Addr: addr, Pool: rec.Pool, Released: rec.Released}, nil
}

// recordPayload is the JSON of a record: checked and unsealed in the
// current format, as is in format 1.
func recordPayload(v []byte, version string) ([]byte, error) {
	if v == nil {
		return nil, fmt.Errorf("a bucket where a record belongs")
	}
	if version == legacyFormat {
		return v, nil
	}
	return unsealRecord(v)
}

// describeKey prints a lease key as sandbox/ifname when it decodes.
func describeKey(k []byte) string {
	n, used := binary.Uvarint(k)
	if used > 0 && n <= uint64(len(k)-used) {
		return fmt.Sprintf("%s/%s", k[used:used+int(n)], k[used+int(n):])
	}
	return fmt.Sprintf("%q", k)
}

// initFormat creates the buckets and writes every record of old (a format
// 1 file, or nil for a new store) in the current format.
func initFormat(tx *bolt.Tx, old *Contents) error {
	for _, name := range []string{bucketLeases, bucketCooling, bucketMeta} {
		if _, err := tx.CreateBucketIfNotExists([]byte(name)); err != nil {
			return fmt.Errorf("create bucket %s: %w", name, err)
		}
	}
	op := &writeOp{}
	if old != nil {
		for _, l := range old.Leases {
			rec, err := encodeLease(l)
			if err != nil {
				return err
			}
			op.putLeases = append(op.putLeases, rec)
		}
		for _, c := range old.Cooldowns {
			rec, err := encodeCooling(c)
			if err != nil {
				return err
			}
			op.putCooling = append(op.putCooling, rec)
		}
	}
	meta := tx.Bucket([]byte(bucketMeta))
	if err := meta.Put([]byte(metaVersion), []byte(formatVersion)); err != nil {
		return fmt.Errorf("put format version: %w", err)
	}
	if err := meta.Put([]byte(metaSeq), binary.BigEndian.AppendUint64(nil, 0)); err != nil {
		return fmt.Errorf("put commit sequence: %w", err)
	}
	if old == nil {
		return nil
	}
	return applyAll(tx, []*writeOp{op}, 1) // commit 1: the converted records
}
