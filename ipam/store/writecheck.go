package store

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"os"
	"slices"
	"sort"

	bolt "go.etcd.io/bbolt"
)

// checkBeforeWrite checks, before a transaction, what bbolt will read and
// free while writing ops: the file must still be the one this process last
// committed (bbolt falls back to the older meta page when the newest is
// damaged, and would then write a commit that reuses the lost one's
// transaction id and sequence), and the pages the write walks, frees or
// rebalances, and the freelist, must be bbolt's pages. bbolt trusts them:
// a damaged page makes it panic, or loop over a page count read from
// garbage without bound. Every finding is a *DamagedError.
func (s *Store) checkBeforeWrite(ops []*writeOp) error {
	return guard(s.path, func() error {
		return s.db.View(func(tx *bolt.Tx) error {
			switch {
			case tx.ID() < s.lastTx:
				return Damaged(s.path, "rolled back while raild ran: the file's newest commit is transaction %d, raild last committed %d: the meta page of the last commit was overwritten", tx.ID(), s.lastTx)
			case tx.ID() > s.lastTx:
				return Damaged(s.path, "changed while raild ran: the file's newest commit is transaction %d, raild last committed %d: a failed write left part of a commit behind, or another process wrote the file", tx.ID(), s.lastTx)
			}
			r, err := s.newPageReader(tx)
			if err != nil {
				return err
			}
			if err := r.checkTree(touchedKeys(ops)); err != nil {
				return err
			}
			if err := r.checkFreelist(); err != nil {
				return err
			}
			return checkSeqUnchanged(tx, s.path, s.lastSeq)
		})
	})
}

func checkSeqUnchanged(tx *bolt.Tx, path string, want uint64) error {
	raw := tx.Bucket([]byte(bucketMeta)).Get([]byte(metaSeq))
	if len(raw) != 8 || binary.BigEndian.Uint64(raw) != want {
		return Damaged(path, "rolled back while raild ran: its commit sequence is not %d, the last raild committed", want)
	}
	return nil
}

// touchedKeys are the keys ops write, per bucket, sorted.
func touchedKeys(ops []*writeOp) map[string][][]byte {
	keys := map[string][][]byte{bucketMeta: {[]byte(metaSeq)}}
	for _, op := range ops {
		for _, p := range op.putLeases {
			keys[bucketLeases] = append(keys[bucketLeases], p.k)
		}
		keys[bucketLeases] = append(keys[bucketLeases], op.delLeases...)
		for _, p := range op.putCooling {
			keys[bucketCooling] = append(keys[bucketCooling], p.k)
		}
		keys[bucketCooling] = append(keys[bucketCooling], op.delCooling...)
		for _, c := range op.purge {
			keys[bucketCooling] = append(keys[bucketCooling], []byte(c.Addr.String()))
		}
	}
	for name := range keys {
		slices.SortFunc(keys[name], bytes.Compare)
		keys[name] = slices.CompactFunc(keys[name], bytes.Equal)
	}
	return keys
}

// bbolt's page layout, beyond pages.go: a page header is id (uint64),
// flags (uint16), count (uint16), overflow (uint32); branch elements are
// pos, ksize (uint32), pgid (uint64), leaf elements flags, pos, ksize,
// vsize (uint32), each pos counted from the element itself. A bucket's
// value is its root page id and sequence (uint64), then, for an inline
// bucket (root 0), its page.
const (
	branchPageFlag = 0x01
	leafPageFlag   = 0x02
	bucketLeafFlag = 0x01
	elementLen     = 16
	bucketHeadLen  = 16
	metaRootAt     = pageHeaderLen + 16
	freelistLarge  = 0xFFFF
)

// pageReader reads pages of the file as the open transaction sees it.
type pageReader struct {
	f        *os.File
	path     string
	pageSize uint64
	highMark uint64 // pages in use: ids are below it
	root     uint64 // the root bucket's page
	freelist uint64
	used     map[uint64]bool   // pages read on the way
	cache    map[uint64][]byte // pages checked, by id
	running  bool              // raild is running on the file (not opening it)
}

func (r *pageReader) damaged(format string, args ...any) error {
	if r.running {
		return Damaged(r.path, "damaged while raild ran: "+format, args...)
	}
	return Damaged(r.path, "damaged: "+format, args...)
}

func (s *Store) newPageReader(tx *bolt.Tx) (*pageReader, error) {
	r := &pageReader{f: s.file, path: s.path, pageSize: uint64(tx.DB().Info().PageSize), used: map[uint64]bool{}, cache: map[uint64][]byte{}, running: true}
	for id := range uint64(2) {
		meta, err := r.read(id, 1)
		if err != nil {
			return nil, err
		}
		if checkHeader(meta, id, metaPageFlag) != nil || binary.NativeEndian.Uint64(meta[metaTxidAt:]) != uint64(tx.ID()) {
			continue
		}
		r.root = binary.NativeEndian.Uint64(meta[metaRootAt:])
		r.freelist = binary.NativeEndian.Uint64(meta[metaFreelistAt:])
		r.highMark = binary.NativeEndian.Uint64(meta[metaPgidAt:])
		info, err := r.f.Stat()
		if err != nil {
			return nil, fmt.Errorf("ipam: %w", err)
		}
		if uint64(info.Size()) < r.highMark*r.pageSize {
			return nil, Damaged(r.path, "truncated while raild ran: %d bytes, its last commit needs %d", info.Size(), r.highMark*r.pageSize)
		}
		return r, nil
	}
	return nil, r.damaged("no meta page holds transaction %d", tx.ID())
}

// read returns pages id to id+n-1.
func (r *pageReader) read(id, n uint64) ([]byte, error) {
	buf := make([]byte, n*r.pageSize)
	if _, err := r.f.ReadAt(buf, int64(id*r.pageSize)); err != nil {
		return nil, r.damaged("page %d unreadable: %v", id, err)
	}
	return buf, nil
}

// page reads page id, which must carry one of flags, with its overflow;
// a page is read and checked once per check.
func (r *pageReader) page(id uint64, flags uint16) ([]byte, error) {
	if buf, ok := r.cache[id]; ok && binary.NativeEndian.Uint16(buf[8:])&flags != 0 {
		return buf, nil
	}
	buf, err := r.readPage(id, flags)
	if err == nil && flags != freelistPageFlag {
		err = r.checkElements(buf, fmt.Sprintf("page %d", id))
	}
	if err != nil {
		return nil, err
	}
	r.cache[id] = buf
	return buf, nil
}

func (r *pageReader) readPage(id uint64, flags uint16) ([]byte, error) {
	role := "page"
	if flags == freelistPageFlag {
		role = "freelist page"
	}
	if id < 2 || id >= r.highMark {
		return nil, r.damaged("%s %d is outside the file's %d pages", role, id, r.highMark)
	}
	buf, err := r.read(id, 1)
	if err != nil {
		return nil, err
	}
	if got := binary.NativeEndian.Uint64(buf); got != id {
		return nil, r.damaged("%s %d identifies as page %d", role, id, got)
	}
	if got := binary.NativeEndian.Uint16(buf[8:]); got&flags == 0 || got&^flags != 0 {
		return nil, r.damaged("%s %d has type flags %#x, want %#x", role, id, got, flags)
	}
	overflow := uint64(binary.NativeEndian.Uint32(buf[12:]))
	if id+overflow >= r.highMark {
		return nil, r.damaged("%s %d claims %d overflow pages, beyond the file's %d", role, id, overflow, r.highMark)
	}
	for i := range overflow + 1 {
		r.used[id+i] = true
	}
	if overflow == 0 {
		return buf, nil
	}
	return r.read(id, overflow+1)
}

// checkTree walks the root bucket to each bucket of keys, and each bucket
// to its keys, checking every page on the way and their siblings (a write
// rebalances a node with its neighbour).
func (r *pageReader) checkTree(keys map[string][][]byte) error {
	for _, name := range []string{bucketCooling, bucketLeases, bucketMeta} {
		if len(keys[name]) == 0 && name != bucketMeta {
			continue
		}
		v, err := r.lookup(r.root, nil, []byte(name))
		if err != nil {
			return err
		}
		if len(v) < bucketHeadLen {
			return r.damaged("bucket %q is missing", name)
		}
		root := binary.NativeEndian.Uint64(v)
		if root == 0 { // inline: its page is the value's tail
			if err := r.checkElements(v[bucketHeadLen:], "inline bucket "+name); err != nil {
				return err
			}
			continue
		}
		for _, k := range keys[name] {
			if _, err := r.lookup(root, nil, k); err != nil {
				return err
			}
		}
	}
	return nil
}

// lookup descends from page id to the leaf that holds (or would hold) key
// and returns key's value, nil when absent. parent is the branch above id
// and the index of id in it, for its siblings.
func (r *pageReader) lookup(id uint64, siblings []uint64, key []byte) ([]byte, error) {
	for _, sib := range siblings {
		if _, err := r.page(sib, branchPageFlag|leafPageFlag); err != nil {
			return nil, err
		}
	}
	buf, err := r.page(id, branchPageFlag|leafPageFlag)
	if err != nil {
		return nil, err
	}
	count := int(binary.NativeEndian.Uint16(buf[10:]))
	if binary.NativeEndian.Uint16(buf[8:]) == leafPageFlag {
		i := sort.Search(count, func(i int) bool { return bytes.Compare(elementKey(buf, i), key) >= 0 })
		if i < count && bytes.Equal(elementKey(buf, i), key) {
			return elementValue(buf, i), nil
		}
		return nil, nil
	}
	if count == 0 {
		return nil, r.damaged("branch page %d is empty", id)
	}
	i := sort.Search(count, func(i int) bool { return bytes.Compare(elementKey(buf, i), key) >= 0 })
	if i == count || (i > 0 && !bytes.Equal(elementKey(buf, i), key)) {
		i--
	}
	var sibs []uint64
	for _, j := range []int{i - 1, i + 1} {
		if j >= 0 && j < count {
			sibs = append(sibs, childOf(buf, j))
		}
	}
	return r.lookup(childOf(buf, i), sibs, key)
}

// checkElements checks that a branch or leaf page's elements, and the keys
// and values they point at, lie inside it.
func (r *pageReader) checkElements(buf []byte, what string) error {
	if len(buf) < pageHeaderLen {
		return r.damaged("%s is %d bytes, shorter than a page header", what, len(buf))
	}
	flags, count := binary.NativeEndian.Uint16(buf[8:]), int(binary.NativeEndian.Uint16(buf[10:]))
	if flags != branchPageFlag && flags != leafPageFlag {
		return r.damaged("%s has type flags %#x", what, flags)
	}
	if pageHeaderLen+count*elementLen > len(buf) {
		return r.damaged("%s claims %d elements, more than fit", what, count)
	}
	for i := range count {
		at := pageHeaderLen + i*elementLen
		pos, ksize := binary.NativeEndian.Uint32(buf[at+4:]), binary.NativeEndian.Uint32(buf[at+8:])
		size := uint64(ksize)
		if flags == branchPageFlag {
			pos = binary.NativeEndian.Uint32(buf[at:])
			size = uint64(binary.NativeEndian.Uint32(buf[at+4:]))
		} else {
			size += uint64(binary.NativeEndian.Uint32(buf[at+12:]))
		}
		if uint64(at)+uint64(pos)+size > uint64(len(buf)) {
			return r.damaged("%s element %d points outside it", what, i)
		}
	}
	return nil
}

func elementKey(buf []byte, i int) []byte {
	at := pageHeaderLen + i*elementLen
	if binary.NativeEndian.Uint16(buf[8:]) == branchPageFlag {
		pos, ksize := binary.NativeEndian.Uint32(buf[at:]), binary.NativeEndian.Uint32(buf[at+4:])
		return buf[at+int(pos) : at+int(pos)+int(ksize)]
	}
	pos, ksize := binary.NativeEndian.Uint32(buf[at+4:]), binary.NativeEndian.Uint32(buf[at+8:])
	return buf[at+int(pos) : at+int(pos)+int(ksize)]
}

func elementValue(buf []byte, i int) []byte {
	at := pageHeaderLen + i*elementLen
	pos, ksize, vsize := binary.NativeEndian.Uint32(buf[at+4:]), binary.NativeEndian.Uint32(buf[at+8:]), binary.NativeEndian.Uint32(buf[at+12:])
	start := at + int(pos) + int(ksize)
	return buf[start : start+int(vsize)]
}

func childOf(buf []byte, i int) uint64 {
	return binary.NativeEndian.Uint64(buf[pageHeaderLen+i*elementLen+8:])
}

// checkFreelist checks the freelist page the write will free and replace:
// its header, and ids that are sorted, inside the file and not pages in
// use on the way to the keys.
func (r *pageReader) checkFreelist() error {
	if r.freelist == noFreelist {
		return nil
	}
	buf, err := r.page(r.freelist, freelistPageFlag)
	if err != nil {
		return err
	}
	count, at := uint64(binary.NativeEndian.Uint16(buf[10:])), uint64(pageHeaderLen)
	if count == freelistLarge {
		count, at = binary.NativeEndian.Uint64(buf[at:]), at+8
	}
	if count > (uint64(len(buf))-at)/8 {
		return r.damaged("freelist page %d claims %d free pages, more than it holds", r.freelist, count)
	}
	prev := uint64(1)
	for i := range count {
		id := binary.NativeEndian.Uint64(buf[at+i*8:])
		switch {
		case id <= prev || id >= r.highMark:
			return r.damaged("freelist page %d lists page %d out of order or outside the file", r.freelist, id)
		case r.used[id] && id != r.freelist:
			return r.damaged("page %d is both in use and free", id)
		}
		prev = id
	}
	return nil
}

// checkFreelistBeforeOpen checks the freelist page of the meta page bbolt
// will use before bbolt opens the file: bbolt reads the freelist in Open,
// and a panic there leaves the file mapped, so its lock stays held until
// the process ends. A file too short or without a valid meta page is left
// to bbolt and the truncation check.
func checkFreelistBeforeOpen(path string) error {
	f, err := openNoFollow(path, os.O_RDONLY, 0)
	if err != nil {
		return nil // the open that follows says why
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil
	}
	var best []byte
	for _, at := range metaOffsets(nil) {
		meta := make([]byte, pageHeaderLen+64)
		if _, err := f.ReadAt(meta, int64(at)); err != nil || !validMeta(meta) {
			continue
		}
		if best == nil || binary.NativeEndian.Uint64(meta[metaTxidAt:]) > binary.NativeEndian.Uint64(best[metaTxidAt:]) {
			best = meta
		}
	}
	if best == nil {
		return nil
	}
	r := &pageReader{f: f, path: path, used: map[uint64]bool{}, cache: map[uint64][]byte{},
		pageSize: uint64(binary.NativeEndian.Uint32(best[metaPageSizeAt:])),
		highMark: binary.NativeEndian.Uint64(best[metaPgidAt:]),
		freelist: binary.NativeEndian.Uint64(best[metaFreelistAt:])}
	if r.pageSize == 0 || uint64(info.Size()) < r.highMark*r.pageSize {
		return nil
	}
	return r.checkFreelist()
}

// validMeta is bbolt's own test of a meta page: its magic, version 2 and
// checksum (FNV-1a 64 of the fields before it).
func validMeta(meta []byte) bool {
	body := meta[pageHeaderLen:]
	if binary.NativeEndian.Uint32(body) != metaMagic || binary.NativeEndian.Uint32(body[4:]) != 2 {
		return false
	}
	h := fnv.New64a()
	h.Write(body[:56])
	return h.Sum64() == binary.NativeEndian.Uint64(body[56:])
}
