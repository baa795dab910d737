package main

import (
	"fmt"
	"net"

	"github.com/containernetworking/cni/pkg/skel"
	"github.com/containernetworking/cni/pkg/types"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/attach"
	"github.com/railcni/rail/pkg/netconf"
	"github.com/railcni/rail/pkg/rdma"
	"github.com/railcni/rail/pkg/topology"
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
	if err := oneGUIDPerVF(conf, plan); err != nil {
		return nil, err
	}
	if planMode(conf, plan) == api.ModeVF && conf.VFConfig().MAC != nil && len(plan.Interfaces) > 1 {
		return nil, types.NewError(types.ErrInvalidNetworkConfig, "invalid netconf field \"mac\"",
			fmt.Sprintf("mac %s names one MAC, but this attachment gets %d VFs and no two VFs may share a MAC: set \"maxNICs\": 1, or leave mac out (each VF then gets its lease's own)",
				conf.VFConfig().MAC, len(plan.Interfaces)))
	}
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
		RDMANetns: mode, Addresses: addressing.Prefixes(), SoftRoCE: iface.SoftRoCE,
	}
	if conf.MTU != 0 {
		spec.MTU = conf.MTU
	}
	if iface.NIC != nil {
		spec.Parent, spec.RDMADevice = iface.NIC.Netdev, iface.NIC.RDMADevice
	}
	if attachMode == api.ModeVF {
		vf, err := vfSpec(conf, iface)
		if err != nil {
			return attach.Spec{}, verbs.Addressing{}, err
		}
		spec.Parent, spec.RDMADevice, spec.VF = iface.VF.Netdev, iface.VF.RDMADevice, vf
	}
	for _, r := range addressing.Routes {
		spec.Routes = append(spec.Routes, attach.Route(r))
	}
	return spec, addressing, nil
}

// vfSpec is what vf mode sets through the PF of a planned VF: the
// netconf's settings over its pool's, key by key, and the netconf's MAC,
// else the admin MAC of the lease.
func vfSpec(conf *netconf.Rail, iface api.PlanInterface) (*attach.VF, error) {
	vf := iface.VF
	switch {
	case vf == nil || vf.PCI == "":
		return nil, types.NewError(types.ErrInternal, "raild's plan names no VF for "+iface.Name, "raild is older than this plugin: update raild")
	case vf.PF == "":
		return nil, types.NewError(types.ErrInternal, "cannot set up VF "+vf.PCI,
			fmt.Sprintf("its PF %s has no netdev in the host netns (moved into a pod, or bound to no network driver): vf mode sets a VF through its PF", vf.PFPCI))
	case vf.Driver == topology.VFIODriver:
		return nil, types.NewError(types.ErrInternal, "cannot attach VF "+vf.PCI,
			"it is bound to vfio-pci (for a VM or DPDK): vf mode needs a VF bound to its network driver (mlx5_core, iavf, igbvf)")
	}
	if spec, err := ibVFSpec(conf, iface); spec != nil || err != nil {
		return spec, err
	}
	cfg := conf.VFConfig()
	if vf.PoolConfig != nil {
		cfg = cfg.Over(*vf.PoolConfig)
		if err := cfg.Validate(); err != nil {
			return nil, types.NewError(types.ErrInvalidNetworkConfig, fmt.Sprintf("invalid netconf field %q", api.KeyOf(err)),
				fmt.Sprintf("with pool %s's VF settings under the netconf's: %s", iface.Pool, err))
		}
	}
	if cfg.MAC == nil {
		mac, err := net.ParseMAC(vf.MAC)
		if err != nil {
			return nil, types.NewError(types.ErrInternal, "raild's plan gives VF "+vf.PCI+" no admin MAC", err.Error())
		}
		cfg.MAC = mac
	}
	return &attach.VF{PF: vf.PF, Index: vf.Index, Config: cfg}, nil
}

// detachSpecFor is what Detach needs of a leased interface. Its addresses
// are not among it: they leave with the interface (a netdev that changes
// netns loses them, a child is deleted), so a lease whose address no
// longer parses still detaches.
//
// A VF is found by its PF and index (its netdev's name may be anything by
// now); without them (the VF or its PF left the node) the alias on the
// pod's interface says what it is.
func detachSpecFor(iface api.PlanInterface, mode api.Mode) attach.Spec {
	spec := attach.Spec{Mode: mode, Name: iface.Name, Table: iface.Table, SoftRoCE: iface.SoftRoCE}
	if mode == api.ModeVF {
		if iface.VF == nil || iface.VF.PF == "" {
			return attach.Spec{Name: iface.Name, Table: iface.Table, SoftRoCE: iface.SoftRoCE}
		}
		spec.RDMADevice, spec.VF = iface.VF.RDMADevice, &attach.VF{PF: iface.VF.PF, Index: iface.VF.Index}
		return spec
	}
	if iface.NIC != nil {
		spec.Parent, spec.RDMADevice = iface.NIC.Netdev, iface.NIC.RDMADevice
	}
	return spec
}
