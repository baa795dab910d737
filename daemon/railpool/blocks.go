package railpool

import (
	"fmt"
	"math/big"
	"net/netip"
	"strconv"
)

// maxIndexBits bounds the index space: a pool never has more than 2^62
// blocks, so an index always fits an int64 (a /64 cut into /128s is still
// far more blocks than nodes).
const maxIndexBits = 62

// layout is a pool's subnet cut into equal blocks.
type layout struct {
	subnet    netip.Prefix
	blockBits int   // prefix length of a block
	count     int64 // number of blocks (capped at 2^maxIndexBits)
}

// newLayout checks blockSize against subnet; field names the spec field
// for the error.
func newLayout(subnet netip.Prefix, blockSize int, field string) (layout, error) {
	bits := subnet.Addr().BitLen()
	if blockSize < subnet.Bits() || blockSize > bits {
		return layout{}, fmt.Errorf("%s %d: want a prefix length from %d (the subnet's own, one block) to %d, e.g. %d for a /%d per node",
			field, blockSize, subnet.Bits(), bits, min(subnet.Bits()+8, bits), min(subnet.Bits()+8, bits))
	}
	return layout{subnet: subnet, blockBits: blockSize, count: int64(1) << min(blockSize-subnet.Bits(), maxIndexBits)}, nil
}

// block returns the CIDR of block index: the subnet's first address plus
// index blocks.
func (l layout) block(index int64) netip.Prefix {
	base := new(big.Int).SetBytes(l.subnet.Addr().AsSlice())
	offset := new(big.Int).Lsh(big.NewInt(index), uint(l.subnet.Addr().BitLen()-l.blockBits))
	raw := base.Add(base, offset).FillBytes(make([]byte, l.subnet.Addr().BitLen()/8))
	addr, _ := netip.AddrFromSlice(raw)
	return netip.PrefixFrom(addr, l.blockBits)
}

// BlockName is the name of a pool's block object: claims of the same
// block share it, so only one create succeeds.
func BlockName(pool string, index int64) string {
	return pool + "-" + strconv.FormatInt(index, 10)
}
