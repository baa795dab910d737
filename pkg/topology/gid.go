package topology

import (
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"strconv"
	"strings"
)

// maxGIDs bounds a GID table scan (mlx5 ports have 255 entries).
const maxGIDs = 256

// PortReader reads the live attributes of RDMA ports below one root: the
// port state and the GID table, which change without a rescan.
type PortReader struct{ fs *fsys }

// NewPortReader reads ports below root ("/" on a real node).
func NewPortReader(root string) (*PortReader, error) {
	f, err := newFsys(root)
	if err != nil {
		return nil, err
	}
	return &PortReader{fs: f}, nil
}

func portDir(nic string, port int) string {
	return "/sys/class/infiniband/" + nic + "/ports/" + strconv.Itoa(port)
}

// State reads a port's state now ("ACTIVE", "DOWN", ...), from
// /sys/class/infiniband/<nic>/ports/<port>/state ("4: ACTIVE").
func (r *PortReader) State(nic string, port int) (string, error) {
	text, err := r.fs.read(portDir(nic, port) + "/state")
	if err != nil {
		return "", fmt.Errorf("port state of %s port %d: %w", nic, port, err)
	}
	if _, name, ok := strings.Cut(text, ":"); ok {
		return strings.TrimSpace(name), nil
	}
	return text, nil
}

// GIDIndex finds the GID index that holds addr on one port, from
// /sys/class/infiniband/<nic>/ports/<port>/gids/<i>. An IPv4 address
// appears IPv4-mapped (::ffff:a.b.c.d). A RoCE v2 entry wins over a RoCE
// v1 one holding the same address, as NCCL needs RoCE v2 to route.
func (r *PortReader) GIDIndex(nic string, port int, addr netip.Addr) (int, error) {
	pd := portDir(nic, port)
	want := addr.As16()
	first := -1
	for i := 0; i < maxGIDs; i++ {
		text, err := r.fs.read(pd + "/gids/" + strconv.Itoa(i))
		if errors.Is(err, fs.ErrNotExist) {
			break
		}
		if err != nil {
			continue // unpopulated entries may read as EINVAL
		}
		gid, err := netip.ParseAddr(text)
		if err != nil || gid.As16() != want {
			continue
		}
		if r.isRoCEv2(pd, i) {
			return i, nil
		}
		if first < 0 {
			first = i
		}
	}
	if first >= 0 {
		return first, nil
	}
	return 0, fmt.Errorf("no GID of %s port %d holds %s (looked in %s/gids)", nic, port, addr, r.fs.host(pd))
}

func (r *PortReader) isRoCEv2(pd string, i int) bool {
	text, err := r.fs.read(pd + "/gid_attrs/types/" + strconv.Itoa(i))
	return err == nil && strings.EqualFold(text, "roce v2")
}
