package vm

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// guestState is what a pod's life must leave as it found it in the guest's
// initial netns: links (name, MTU, flags), addresses, routes, RDMA devices,
// /dev/infiniband's nodes and the GID tables of the RDMA devices.
type guestState map[string][]string

// snapshotGuest reads the guest's state once no IPv6 address of a link
// with carrier is tentative (a NIC back from a pod gets its local route
// again only after duplicate address detection; a link without carrier
// never finishes it, and its state is read as it is).
func snapshotGuest(t *testing.T) guestState {
	t.Helper()
	waitFor(t, "IPv6 duplicate address detection", dadDone)
	s := guestState{}
	links, err := netlink.LinkList()
	if err != nil {
		t.Fatalf("list links: %v", err)
	}
	// By name, not index: a NIC back from a pod's netns may have a new ifindex.
	names := map[int]string{}
	for _, l := range links {
		a := l.Attrs()
		names[a.Index] = a.Name
		s["links"] = append(s["links"], fmt.Sprintf("%s mtu %d up %v", a.Name, a.MTU, a.Flags&unix.IFF_UP != 0))
	}
	addrs, err := netlink.AddrList(nil, netlink.FAMILY_ALL)
	if err != nil {
		t.Fatalf("list addresses: %v", err)
	}
	for _, a := range addrs {
		s["addresses"] = append(s["addresses"], fmt.Sprintf("%s %s", names[a.LinkIndex], a.IPNet))
	}
	routes, err := netlink.RouteListFiltered(netlink.FAMILY_ALL, &netlink.Route{Table: unix.RT_TABLE_UNSPEC},
		netlink.RT_FILTER_TABLE)
	if err != nil {
		t.Fatalf("list routes: %v", err)
	}
	for _, r := range routes {
		s["routes"] = append(s["routes"], fmt.Sprintf("table %d %v via %v src %v dev %s", r.Table, r.Dst, r.Gw, r.Src, names[r.LinkIndex]))
	}
	s["rdma"] = rdmaDevices(t, rdmaHandle(t, nil))
	s["dev/infiniband"] = deviceNodes(t)
	for _, dev := range s["rdma"] {
		s["gids "+dev] = gidTable(dev)
	}
	for k := range s {
		slices.Sort(s[k])
	}
	return s
}

// dadDone reports whether every IPv6 address on a link with carrier has
// finished duplicate address detection.
func dadDone() bool {
	addrs, err := netlink.AddrList(nil, netlink.FAMILY_V6)
	if err != nil {
		return false
	}
	for _, a := range addrs {
		if a.Flags&unix.IFA_F_TENTATIVE == 0 {
			continue
		}
		if l, err := netlink.LinkByIndex(a.LinkIndex); err == nil && l.Attrs().RawFlags&unix.IFF_LOWER_UP != 0 {
			return false
		}
	}
	return true
}

// diff lists what differs from before, key by key.
func (s guestState) diff(before guestState) []string {
	var out []string
	keys := map[string]bool{}
	for k := range s {
		keys[k] = true
	}
	for k := range before {
		keys[k] = true
	}
	for k := range keys {
		for _, v := range before[k] {
			if !slices.Contains(s[k], v) {
				out = append(out, fmt.Sprintf("%s: gone: %s", k, v))
			}
		}
		for _, v := range s[k] {
			if !slices.Contains(before[k], v) {
				out = append(out, fmt.Sprintf("%s: new: %s", k, v))
			}
		}
	}
	slices.Sort(out)
	return out
}

// deviceNodes lists /dev/infiniband as "name type major:minor".
func deviceNodes(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir("/dev/infiniband")
	if err != nil {
		t.Fatalf("read /dev/infiniband: %v", err)
	}
	var out []string
	for _, e := range entries {
		var st unix.Stat_t
		if err := unix.Stat(filepath.Join("/dev/infiniband", e.Name()), &st); err != nil {
			t.Fatalf("stat /dev/infiniband/%s: %v", e.Name(), err)
		}
		out = append(out, fmt.Sprintf("%s %s", e.Name(), nodeKind(st)))
	}
	return out
}

// nodeKind is a node's type and numbers as `stat -c '%F %t:%T'` prints
// them (hex numbers).
func nodeKind(st unix.Stat_t) string {
	kind := "not a character device"
	if st.Mode&unix.S_IFMT == unix.S_IFCHR {
		kind = "character special file"
	}
	return fmt.Sprintf("%s %x:%x", kind, unix.Major(st.Rdev), unix.Minor(st.Rdev))
}

// gidTable reads port 1's populated GID entries of an RDMA device as
// "index gid type netdev".
func gidTable(dev string) []string {
	port := filepath.Join("/sys/class/infiniband", dev, "ports/1")
	var out []string
	for i := 0; ; i++ {
		gid, err := os.ReadFile(filepath.Join(port, "gids", fmt.Sprint(i)))
		if os.IsNotExist(err) {
			return out
		}
		g := strings.TrimSpace(string(gid))
		if err != nil || g == "0000:0000:0000:0000:0000:0000:0000:0000" {
			continue
		}
		typ, _ := os.ReadFile(filepath.Join(port, "gid_attrs/types", fmt.Sprint(i)))
		ndev, _ := os.ReadFile(filepath.Join(port, "gid_attrs/ndevs", fmt.Sprint(i)))
		out = append(out, fmt.Sprintf("%d %s %s %s", i, g, strings.TrimSpace(string(typ)), strings.TrimSpace(string(ndev))))
	}
}

// memAvailable is /proc/meminfo's MemTotal and MemAvailable, for the log.
func memAvailable() string {
	raw, _ := os.ReadFile("/proc/meminfo")
	var keep []string
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(line, "MemTotal:") || strings.HasPrefix(line, "MemAvailable:") {
			keep = append(keep, strings.Join(strings.Fields(line), " "))
		}
	}
	return strings.Join(keep, ", ")
}
