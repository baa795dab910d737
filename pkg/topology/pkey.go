package topology

import (
	"errors"
	"fmt"
	"io/fs"
	"strconv"
)

// maxPKeys bounds a P_Key table scan (mlx5 ports have 128 entries).
const maxPKeys = 512

// pkeyMember is the P_Key's full-membership bit; the low 15 bits are the
// partition.
const pkeyMember = 0x8000

// PKeyIndex finds the index of a partition in one port's P_Key table, from
// /sys/class/infiniband/<nic>/ports/<port>/pkeys/<i> ("0x8001"): the entry
// whose low 15 bits are pkey's, a full-membership entry winning over a
// limited one, as the kernel's ib_find_pkey chooses for an IPoIB child.
// Verbs users (NCCL_IB_PKEY) name the partition by this index.
func (r *PortReader) PKeyIndex(nic string, port int, pkey uint16) (int, error) {
	part := pkey &^ pkeyMember
	if part == 0 {
		return 0, fmt.Errorf("P_Key %#04x has no partition number", pkey)
	}
	pd := portDir(nic, port)
	limited := -1
	for i := 0; i < maxPKeys; i++ {
		text, err := r.fs.read(pd + "/pkeys/" + strconv.Itoa(i))
		if errors.Is(err, fs.ErrNotExist) {
			break
		}
		if err != nil {
			continue
		}
		v, err := strconv.ParseUint(text, 0, 16)
		if err != nil || uint16(v)&^pkeyMember != part {
			continue
		}
		if v&pkeyMember != 0 {
			return i, nil
		}
		if limited < 0 {
			limited = i
		}
	}
	if limited >= 0 {
		return limited, nil
	}
	return 0, fmt.Errorf("no P_Key of %s port %d is partition %#04x (looked in %s/pkeys)", nic, port, part, r.fs.host(pd))
}
