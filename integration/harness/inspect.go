package harness

import (
	"fmt"
	"net"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// PodLink is one interface inside a pod netns.
type PodLink struct {
	Name, Type, MAC, Alias string
	MTU                    int
	Up                     bool
	Addrs                  []string // IPv4 and global IPv6 addresses in CIDR form
}

// Links lists the pod's interfaces with their addresses.
func (p *Pod) Links() ([]PodLink, error) {
	h, err := p.Netns.Netlink()
	if err != nil {
		return nil, err
	}
	defer h.Close()
	links, err := retryDump(h.LinkList)
	if err != nil {
		return nil, fmt.Errorf("pod %s: list links: %w", p.Name, err)
	}
	out := make([]PodLink, 0, len(links))
	for _, l := range links {
		a := l.Attrs()
		pl := PodLink{Name: a.Name, Type: l.Type(), MAC: a.HardwareAddr.String(), Alias: a.Alias, MTU: a.MTU,
			Up: a.Flags&net.FlagUp != 0}
		addrs, err := retryDump(func() ([]netlink.Addr, error) { return h.AddrList(l, netlink.FAMILY_ALL) })
		if err != nil {
			return nil, fmt.Errorf("pod %s: addresses of %s: %w", p.Name, a.Name, err)
		}
		for _, addr := range addrs {
			if addr.IP.To4() != nil || addr.IP.IsGlobalUnicast() {
				pl.Addrs = append(pl.Addrs, addr.IPNet.String())
			}
		}
		out = append(out, pl)
	}
	return out, nil
}

// Link returns one interface of the pod by name.
func (p *Pod) Link(name string) (PodLink, bool, error) {
	links, err := p.Links()
	if err != nil {
		return PodLink{}, false, err
	}
	for _, l := range links {
		if l.Name == name {
			return l, true, nil
		}
	}
	return PodLink{}, false, nil
}

// Route is one route of a pod's routing tables, by device name.
type Route struct {
	Table int
	Dst   string // "default" for the default route
	GW    string
	Dev   string
}

// Routes lists the pod's IPv4 routes of every table except local.
func (p *Pod) Routes() ([]Route, error) {
	h, err := p.Netns.Netlink()
	if err != nil {
		return nil, err
	}
	defer h.Close()
	links, err := retryDump(h.LinkList)
	if err != nil {
		return nil, fmt.Errorf("pod %s: list links: %w", p.Name, err)
	}
	names := map[int]string{}
	for _, l := range links {
		names[l.Attrs().Index] = l.Attrs().Name
	}
	filter := &netlink.Route{Table: unix.RT_TABLE_UNSPEC}
	routes, err := retryDump(func() ([]netlink.Route, error) {
		return h.RouteListFiltered(netlink.FAMILY_V4, filter, netlink.RT_FILTER_TABLE)
	})
	if err != nil {
		return nil, fmt.Errorf("pod %s: list routes: %w", p.Name, err)
	}
	var out []Route
	for _, r := range routes {
		if r.Table == unix.RT_TABLE_LOCAL {
			continue
		}
		rt := Route{Table: r.Table, Dst: "default", Dev: names[r.LinkIndex]}
		if r.Dst != nil && !(r.Dst.IP.IsUnspecified() && isZeroMask(r.Dst.Mask)) {
			rt.Dst = r.Dst.String()
		}
		if r.Gw != nil {
			rt.GW = r.Gw.String()
		}
		out = append(out, rt)
	}
	return out, nil
}

func isZeroMask(m net.IPMask) bool {
	ones, _ := m.Size()
	return ones == 0
}
