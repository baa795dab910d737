package store

import (
	"encoding/binary"
	"fmt"
	"os"

	bolt "go.etcd.io/bbolt"
)

// bbolt's Tx.Check runs in a goroutine of its own, where a panic on a
// damaged page cannot be recovered. Every page it reads is read first by
// the walk of readContents (recovered), except the two meta pages and the
// freelist page: checkPageHeaders reads their headers from the file before
// Check runs. The layout is bbolt's on-disk format: a page starts with its
// id (uint64) and flags (uint16); a meta page holds, after that 16-byte
// header, the freelist page id at +32 and the transaction id at +48, all
// in the machine's byte order.
const (
	pageHeaderLen    = 16
	metaMagic        = 0xED0CDAED
	metaPageSizeAt   = pageHeaderLen + 8
	metaFreelistAt   = pageHeaderLen + 32
	metaPgidAt       = pageHeaderLen + 40
	metaTxidAt       = pageHeaderLen + 48
	metaPageFlag     = 0x04
	freelistPageFlag = 0x10
	noFreelist       = ^uint64(0)
)

func checkPageHeaders(tx *bolt.Tx, path string) error {
	f, err := openNoFollow(path, os.O_RDONLY, 0)
	if err != nil {
		return fmt.Errorf("ipam: %w", err)
	}
	defer f.Close()
	pageSize := int64(tx.DB().Info().PageSize)
	var metas [2][]byte
	for i := range metas {
		if metas[i], err = readPage(f, int64(i), pageSize, path); err != nil {
			return err
		}
		if err := checkHeader(metas[i], uint64(i), metaPageFlag); err != nil {
			return Damaged(path, "damaged: meta page %d: %v", i, err)
		}
	}
	for _, meta := range metas {
		if binary.NativeEndian.Uint64(meta[metaTxidAt:]) != uint64(tx.ID()) {
			continue
		}
		freelist := binary.NativeEndian.Uint64(meta[metaFreelistAt:])
		if freelist == noFreelist {
			return nil
		}
		page, err := readPage(f, int64(freelist), pageSize, path)
		if err != nil {
			return err
		}
		if err := checkHeader(page, freelist, freelistPageFlag); err != nil {
			return Damaged(path, "damaged: freelist page %d: %v", freelist, err)
		}
		return nil
	}
	return Damaged(path, "damaged: no meta page holds transaction %d", tx.ID())
}

func readPage(f *os.File, id, pageSize int64, path string) ([]byte, error) {
	if id > (1<<62)/pageSize {
		return nil, Damaged(path, "damaged: page %d is beyond any file", id)
	}
	page := make([]byte, pageSize)
	if _, err := f.ReadAt(page, id*pageSize); err != nil {
		return nil, Damaged(path, "damaged: page %d unreadable: %v", id, err)
	}
	return page, nil
}

func checkHeader(page []byte, id uint64, flag uint16) error {
	if got := binary.NativeEndian.Uint64(page); got != id {
		return fmt.Errorf("identifies as page %d", got)
	}
	if got := binary.NativeEndian.Uint16(page[8:]); got != flag {
		return fmt.Errorf("has type flags %#x, want %#x", got, flag)
	}
	return nil
}

// truncation says, for a file bbolt could not open, whether it is shorter
// than the pages its meta pages (either of them) account for.
func truncation(path string) (problem string, ok bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", false
	}
	need := uint64(0)
	for _, at := range metaOffsets(data) {
		if at < 0 || at > len(data)-metaTxidAt || binary.NativeEndian.Uint32(data[at+pageHeaderLen:]) != metaMagic {
			continue
		}
		pageSize := uint64(binary.NativeEndian.Uint32(data[at+metaPageSizeAt:]))
		need = max(need, binary.NativeEndian.Uint64(data[at+metaPgidAt:])*pageSize)
	}
	if need <= uint64(len(data)) {
		return "", false
	}
	return fmt.Sprintf("truncated: %d bytes, its last commit needs %d", len(data), need), true
}

// metaOffsets are where the meta pages may start: page 0, and page 1 at
// the page size meta page 0 gives or the system's.
func metaOffsets(data []byte) []int {
	offsets := []int{0, os.Getpagesize()}
	if len(data) >= metaPageSizeAt+4 {
		offsets = append(offsets, int(binary.NativeEndian.Uint32(data[metaPageSizeAt:])))
	}
	return offsets
}
