package verbs

import (
	"fmt"
	"net"
	"net/netip"

	"github.com/containernetworking/cni/pkg/types"
	current "github.com/containernetworking/cni/pkg/types/100"

	"github.com/railcni/rail/pkg/api"
)

// Addressing is one planned interface's addresses and routes, parsed once:
// what the rail plugin puts on the pod interface and what both plugins
// report in their CNI result.
type Addressing struct {
	Addresses []Address
	Routes    []Route
}

// Address is a host address with its prefix (10.10.0.5/24) and an
// optional gateway.
type Address struct {
	Prefix  netip.Prefix
	Gateway netip.Addr
}

// Route is a destination and an optional next hop (zero: link-scoped).
type Route struct {
	Dst netip.Prefix
	GW  netip.Addr
}

// Parse reads a planned interface's addresses and routes. An address or
// route raild should never have planned fails the whole plan (CNI code
// 999, naming the interface and the value): a pod must not start with part
// of its network.
func Parse(iface api.PlanInterface) (Addressing, error) {
	var a Addressing
	for _, addr := range iface.Addresses {
		prefix, err := netip.ParsePrefix(addr.CIDR)
		if err != nil {
			return Addressing{}, planError("address", iface.Name, err)
		}
		gw, err := optionalAddr(addr.Gateway)
		if err != nil {
			return Addressing{}, planError("gateway", iface.Name, err)
		}
		a.Addresses = append(a.Addresses, Address{Prefix: prefix, Gateway: gw})
	}
	for _, r := range iface.Routes {
		dst, err := netip.ParsePrefix(r.Dst)
		if err != nil {
			return Addressing{}, planError("route", iface.Name, fmt.Errorf("dst: %w", err))
		}
		gw, err := optionalAddr(r.GW)
		if err != nil {
			return Addressing{}, planError("route", iface.Name, fmt.Errorf("gw: %w", err))
		}
		a.Routes = append(a.Routes, Route{Dst: dst, GW: gw})
	}
	return a, nil
}

func planError(what, ifname string, err error) error {
	return types.NewError(types.ErrInternal, "raild planned a bad "+what, api.Excerpt(fmt.Sprintf("%s: %v", ifname, err), api.MaxDetails))
}

// Prefixes are the addresses without their gateways.
func (a Addressing) Prefixes() []netip.Prefix {
	out := make([]netip.Prefix, 0, len(a.Addresses))
	for _, addr := range a.Addresses {
		out = append(out, addr.Prefix)
	}
	return out
}

// AddTo appends the addresses and routes to result; index is the
// interface's place in result.Interfaces (nil for an IPAM result).
func (a Addressing) AddTo(result *current.Result, index *int) {
	for _, addr := range a.Addresses {
		result.IPs = append(result.IPs, &current.IPConfig{Interface: index, Address: ipNet(addr.Prefix), Gateway: ipOrNil(addr.Gateway)})
	}
	for _, r := range a.Routes {
		result.Routes = append(result.Routes, &types.Route{Dst: ipNet(r.Dst), GW: ipOrNil(r.GW)})
	}
}

// ipNet keeps the host bits, as a CNI result's address does.
func ipNet(p netip.Prefix) net.IPNet {
	return net.IPNet{IP: p.Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())}
}

func ipOrNil(a netip.Addr) net.IP {
	if !a.IsValid() {
		return nil
	}
	return a.AsSlice()
}

// optionalAddr parses an optional address; a zoned one (fe80::1%eth0)
// cannot be a gateway in a CNI result.
func optionalAddr(s string) (netip.Addr, error) {
	if s == "" {
		return netip.Addr{}, nil
	}
	a, err := netip.ParseAddr(s)
	if err == nil && a.Zone() != "" {
		err = fmt.Errorf("%q has a zone", api.Excerpt(s, 64))
	}
	return a, err
}
