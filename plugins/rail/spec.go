package main

import (
	"github.com/containernetworking/cni/pkg/skel"
	"github.com/containernetworking/cni/pkg/types"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/attach"
	"github.com/railcni/rail/pkg/netconf"
	"github.com/railcni/rail/pkg/rdma"
	"github.com/railcni/rail/pkg/verbs"
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

// planned is one interface of a plan, its addresses and routes parsed
// once: the attach spec puts them on the pod interface, the addressing
// reports them in the CNI result.
type planned struct {
	iface      api.PlanInterface
	spec       attach.Spec
	addressing verbs.Addressing
}

// plannedInterfaces parses the whole plan before anything is attached: a
// plan raild should never have made fails with nothing done.
func plannedInterfaces(args *skel.CmdArgs, conf *netconf.Rail, plan *api.Plan, mode rdma.NetnsMode) ([]planned, error) {
	out := make([]planned, 0, len(plan.Interfaces))
	for _, iface := range plan.Interfaces {
		spec, addressing, err := specFor(conf, iface, planMode(conf, plan), mode)
		if err != nil {
			return nil, err
		}
		spec.Owner = attach.FitOwner(spec, ownerOf(args, conf, iface))
		out = append(out, planned{iface: iface, spec: spec, addressing: addressing})
	}
	return out, nil
}

// specFor turns one planned interface into an attach spec, with its
// addressing parsed for the result.
func specFor(conf *netconf.Rail, iface api.PlanInterface, attachMode api.Mode, mode rdma.NetnsMode) (attach.Spec, verbs.Addressing, error) {
	addressing, err := verbs.Parse(iface)
	if err != nil {
		return attach.Spec{}, verbs.Addressing{}, err
	}
	spec := attach.Spec{
		Mode: attachMode, Name: iface.Name, MTU: iface.MTU, Table: iface.Table,
		ArpTuning: iface.Table > 0, MacvlanMode: conf.MacvlanMode, PKey: conf.PKeyValue, IPoIBMode: conf.IPoIBMode,
		RDMAExclusive: mode == rdma.NetnsExclusive, Addresses: addressing.Prefixes(),
	}
	if conf.MTU != 0 {
		spec.MTU = conf.MTU
	}
	if iface.NIC != nil {
		spec.Parent, spec.RDMADevice = iface.NIC.Netdev, iface.NIC.RDMADevice
	}
	for _, r := range addressing.Routes {
		spec.Routes = append(spec.Routes, attach.Route(r))
	}
	return spec, addressing, nil
}

// detachSpecFor is what Detach needs of a leased interface. Its addresses
// are not among it: they leave with the interface (a netdev that changes
// netns loses them, a child is deleted), so a lease whose address no
// longer parses still detaches.
func detachSpecFor(iface api.PlanInterface, mode api.Mode) attach.Spec {
	spec := attach.Spec{Mode: mode, Name: iface.Name, Table: iface.Table}
	if iface.NIC != nil {
		spec.Parent, spec.RDMADevice = iface.NIC.Netdev, iface.NIC.RDMADevice
	}
	return spec
}
