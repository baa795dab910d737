package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// The side record is a small file beside leases.db holding the sequence
// number of the last commit that returned to a caller. bbolt never touches
// it, so a leases.db that lost acknowledged commits (an older copy put
// back, a damaged meta page making bbolt fall back to the commit before)
// has a lower sequence than its side record, and Open says so.
//
// Layout (seqRecordLen bytes at offset 0): "RAILSEQ1", the sequence
// (uint64 big endian), CRC-32C of the 16 bytes before it. It is rewritten in
// place with one write and fdatasync: far smaller than a disk sector, so a
// crash leaves either the old record or the new one.
const (
	seqMagic     = "RAILSEQ1"
	seqRecordLen = len(seqMagic) + 8 + 4
	seqSuffix    = ".seq"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// seqPath is the side record of the store at dbPath.
func seqPath(dbPath string) string { return dbPath + seqSuffix }

func encodeSeq(seq uint64) []byte {
	b := make([]byte, 0, seqRecordLen)
	b = append(b, seqMagic...)
	b = binary.BigEndian.AppendUint64(b, seq)
	return binary.BigEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

func decodeSeq(b []byte) (uint64, error) {
	if len(b) < seqRecordLen || string(b[:len(seqMagic)]) != seqMagic {
		return 0, errors.New("not a rail sequence record")
	}
	body, sum := b[:seqRecordLen-4], binary.BigEndian.Uint32(b[seqRecordLen-4:])
	if crc32.Checksum(body, castagnoli) != sum {
		return 0, errors.New("checksum mismatch")
	}
	return binary.BigEndian.Uint64(body[len(seqMagic):]), nil
}

// readSeq reads the side record; exists is false when there is none.
func readSeq(path string) (seq uint64, exists bool, err error) {
	data, err := readNoFollow(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("read %s: %w", path, err)
	}
	seq, err = decodeSeq(data)
	if err != nil {
		return 0, true, Damaged(path, "damaged side record (%v): it cannot tell whether leases.db lost commits", err)
	}
	return seq, true, nil
}

// createSeq writes a new side record durably (file and directory entry).
func createSeq(path string, seq uint64) error {
	f, err := openNoFollow(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	_, err = f.Write(encodeSeq(seq))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return syncDir(filepath.Dir(path))
}

// syncDir makes renames and creations in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("open %s: %w", dir, err)
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}

// seqFile keeps the side record up to date while the store is open.
type seqFile struct {
	path      string
	committed atomic.Uint64 // highest sequence bbolt committed

	mu      sync.Mutex
	f       *os.File
	written uint64 // highest sequence on disk
	// sync makes the record's write durable (unix.Fdatasync; a test
	// holds it to see who waits for it)
	sync func(fd int) error
}

func openSeqFile(path string, seq uint64) (*seqFile, error) {
	f, err := openNoFollow(path, os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	s := &seqFile{path: path, f: f, sync: unix.Fdatasync}
	s.committed.Store(seq)
	if err := s.cover(seq); err != nil {
		return nil, errors.Join(err, f.Close())
	}
	return s, nil
}

// cover returns once the side record holds seq or later. One write covers
// every commit made before it. The writer calls it after answering each
// commit's sessions (writer.go), openSeqFile once.
func (s *seqFile) cover(seq uint64) error {
	for {
		if c := s.committed.Load(); c >= seq || s.committed.CompareAndSwap(c, seq) {
			break
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.written >= seq {
		return nil
	}
	target := s.committed.Load()
	if _, err := s.f.WriteAt(encodeSeq(target), 0); err != nil {
		return fmt.Errorf("write %s: %w", s.path, err)
	}
	if err := s.sync(int(s.f.Fd())); err != nil {
		return fmt.Errorf("sync %s: %w", s.path, err)
	}
	s.written = target
	return nil
}

func (s *seqFile) close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.f.Close(); err != nil && !errors.Is(err, os.ErrClosed) {
		return fmt.Errorf("close %s: %w", s.path, err)
	}
	return nil
}
