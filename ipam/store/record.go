package store

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
)

// Format 2 stores each lease and cooldown record as the CRC-32C of its JSON
// (4 bytes, big endian) followed by the JSON, so a record whose bytes
// changed on disk (an address rewritten by bit rot into another valid one)
// is refused at open instead of loaded. Format 1 had the JSON alone; Open
// converts a format 1 file in place.
const (
	formatVersion = "2"
	legacyFormat  = "1"
	recordSumLen  = 4
)

var errRecordSum = errors.New("checksum mismatch: its bytes changed after raild wrote them")

// sealRecord prefixes payload with its checksum.
func sealRecord(payload []byte) []byte {
	out := make([]byte, recordSumLen, recordSumLen+len(payload))
	binary.BigEndian.PutUint32(out, crc32.Checksum(payload, castagnoli))
	return append(out, payload...)
}

// unsealRecord returns the payload of a sealed record after checking it.
func unsealRecord(v []byte) ([]byte, error) {
	if len(v) < recordSumLen {
		return nil, errors.New("too short for a record")
	}
	payload := v[recordSumLen:]
	if crc32.Checksum(payload, castagnoli) != binary.BigEndian.Uint32(v) {
		return nil, errRecordSum
	}
	return payload, nil
}
