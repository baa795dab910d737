package recovery

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/railcni/rail/pkg/attach"
	"github.com/railcni/rail/pkg/nsfs"
)

// podLink is one interface with addresses found in a pod netns.
type podLink struct {
	Netns string // the netns bind mount, as the runtime passes it (CNI_NETNS)
	Name  string // the interface's name in the pod
	Rail  *attach.Recorded
	Addrs []netip.Prefix // global unicast addresses, in the kernel's order
}

// errNetnsDenied: this process may not enter pod netns (no CAP_SYS_ADMIN),
// so it cannot see any pod's addresses.
var errNetnsDenied = errors.New("entering a pod's netns needs CAP_SYS_ADMIN")

// scanNetnsDir visits every netns bind mount in dir and returns the
// interfaces with global addresses; netns that cannot be read (a leftover
// mount point, a netns gone meanwhile) are returned as problems, not
// errors. Being denied entry is an error wrapping errNetnsDenied: then no
// netns can be read.
func scanNetnsDir(dir string) (links []podLink, problems []string, err error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("--netns-dir %s: %w: want the directory where the runtime keeps pod netns (e.g. /var/run/netns)", dir, err)
	}
	if len(entries) > 0 {
		if err := mayEnterNetns(); err != nil {
			return nil, nil, fmt.Errorf("%d netns under %s: %w", len(entries), dir, err)
		}
	}
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		found, err := scanNetns(path)
		if errors.Is(err, os.ErrPermission) {
			return nil, nil, fmt.Errorf("%s: %w: %w", path, err, errNetnsDenied)
		}
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", path, err))
			continue
		}
		links = append(links, found...)
	}
	return links, problems, nil
}

// mayEnterNetns is nil when this thread has CAP_SYS_ADMIN, which entering
// a pod's netns needs (netlink's error for a refused setns loses its errno).
func mayEnterNetns() error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return fmt.Errorf("read capabilities: %w", err)
	}
	if data[unix.CAP_SYS_ADMIN/32].Effective&(1<<(unix.CAP_SYS_ADMIN%32)) == 0 {
		return errNetnsDenied
	}
	return nil
}

func scanNetns(path string) ([]podLink, error) {
	ns, err := nsfs.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open netns: %w", err)
	}
	defer ns.Close()
	h, err := netlink.NewHandleAt(ns)
	if err != nil {
		return nil, fmt.Errorf("netlink in netns: %w", err)
	}
	defer h.Close()
	all, err := h.LinkList()
	if err != nil {
		return nil, fmt.Errorf("list links: %w", err)
	}
	var out []podLink
	for _, l := range all {
		pl, err := readLink(h, l, path)
		if err != nil {
			return nil, err
		}
		if len(pl.Addrs) > 0 {
			out = append(out, pl)
		}
	}
	return out, nil
}

func readLink(h *netlink.Handle, l netlink.Link, path string) (podLink, error) {
	pl := podLink{Netns: path, Name: l.Attrs().Name}
	if rec, ok := attach.ReadAlias(l.Attrs().Alias); ok {
		pl.Rail = &rec
	}
	addrs, err := h.AddrList(l, netlink.FAMILY_ALL)
	if err != nil {
		return pl, fmt.Errorf("addresses of %s: %w", pl.Name, err)
	}
	for _, a := range addrs {
		ip, ok := netip.AddrFromSlice(a.IP)
		if !ok || !ip.Unmap().IsGlobalUnicast() {
			continue
		}
		ones, _ := a.Mask.Size()
		pl.Addrs = append(pl.Addrs, netip.PrefixFrom(ip.Unmap(), ones))
	}
	return pl, nil
}
