package main

import (
	"fmt"
	"net/netip"

	"github.com/containernetworking/cni/pkg/types"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/attach"
	"github.com/railcni/rail/pkg/netconf"
	"github.com/railcni/rail/pkg/rdma"
)

// rdmaMode reads the RDMA netns mode and refuses a mode that cannot work in it.
func (p *plugin) rdmaMode(conf *netconf.Rail) (rdma.NetnsMode, error) {
	mode, err := p.netnsMode()
	if err != nil {
		return "", types.NewError(types.ErrInternal, "cannot read the RDMA netns mode", err.Error())
	}
	if err := rdma.ModeRequirement(conf.Mode, mode); err != nil {
		return "", types.NewError(types.ErrInvalidNetworkConfig, "invalid netconf field \"mode\"", err.Error())
	}
	return mode, nil
}

// planMode is the mode the lease records; the netconf's only when the plan
// has none.
func planMode(conf *netconf.Rail, plan *api.Plan) api.Mode {
	if plan.Mode != "" {
		return plan.Mode
	}
	return conf.Mode
}

// specFor turns one planned interface into an attach spec.
func specFor(conf *netconf.Rail, iface api.PlanInterface, attachMode api.Mode, mode rdma.NetnsMode) (attach.Spec, error) {
	spec := attach.Spec{
		Mode: attachMode, Name: iface.Name, MTU: iface.MTU, Table: iface.Table,
		ArpTuning: iface.Table > 0, MacvlanMode: conf.MacvlanMode, PKey: conf.PKeyValue, IPoIBMode: conf.IPoIBMode,
		RDMAExclusive: mode == rdma.NetnsExclusive,
	}
	if conf.MTU != 0 {
		spec.MTU = conf.MTU
	}
	if iface.NIC != nil {
		spec.Parent, spec.RDMADevice = iface.NIC.Netdev, iface.NIC.RDMADevice
	}
	for _, a := range iface.Addresses {
		prefix, err := netip.ParsePrefix(a.CIDR)
		if err != nil {
			return spec, fmt.Errorf("raild planned a bad address %q for %s: %w", a.CIDR, iface.Name, err)
		}
		spec.Addresses = append(spec.Addresses, prefix)
	}
	for _, r := range iface.Routes {
		route, err := parseRoute(r)
		if err != nil {
			return spec, fmt.Errorf("raild planned a bad route for %s: %w", iface.Name, err)
		}
		spec.Routes = append(spec.Routes, route)
	}
	return spec, nil
}

func parseRoute(r api.Route) (attach.Route, error) {
	dst, err := netip.ParsePrefix(r.Dst)
	if err != nil {
		return attach.Route{}, fmt.Errorf("dst %q: %w", r.Dst, err)
	}
	route := attach.Route{Dst: dst}
	if r.GW != "" {
		if route.GW, err = netip.ParseAddr(r.GW); err != nil {
			return attach.Route{}, fmt.Errorf("gw %q: %w", r.GW, err)
		}
	}
	return route, nil
}
