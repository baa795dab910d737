package topology

import (
	"fmt"
	"net/netip"
	"strconv"
)

// LinkLayer reads a port's link layer now, from
// /sys/class/infiniband/<nic>/ports/<port>/link_layer.
func (r *PortReader) LinkLayer(nic string, port int) (LinkLayer, error) {
	text, err := r.fs.read(portDir(nic, port) + "/link_layer")
	if err != nil {
		return "", fmt.Errorf("link layer of %s port %d: %w", nic, port, err)
	}
	ll, ok := ParseLinkLayer(text)
	if !ok {
		return LinkLayer(text), nil
	}
	return ll, nil
}

// GID reads one entry of a port's GID table now, from
// /sys/class/infiniband/<nic>/ports/<port>/gids/<index>; an IPv4 address
// reads IPv4-mapped (::ffff:a.b.c.d), as the kernel writes it.
func (r *PortReader) GID(nic string, port, index int) (netip.Addr, error) {
	p := portDir(nic, port) + "/gids/" + strconv.Itoa(index)
	text, err := r.fs.read(p)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("GID %d of %s port %d: %w", index, nic, port, err)
	}
	gid, err := netip.ParseAddr(text)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("GID %d of %s port %d: %q in %s: %w", index, nic, port, text, r.fs.host(p), err)
	}
	return gid, nil
}
