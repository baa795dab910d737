package attach

import (
	"fmt"
	"net"

	"github.com/containernetworking/plugins/pkg/netlinksafe"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/vfpf"
)

// VF is what vf mode attaches beyond a move: the VF's place on its PF and
// what the pod's VF gets through the PF. The VF's own netdev is
// Spec.Parent, its RDMA device Spec.RDMADevice.
type VF struct {
	// PF is the PF's netdev in the host netns; the VF is set through it.
	PF string
	// Index is the VF's index on its PF (the PF's virtfn<Index>).
	Index int
	// Config is what to set through the PF.
	Config VFConfig
	// GUID, for a VF of an InfiniBand PF, is the node and port GUID to set
	// through the PF (eight bytes); nil for a RoCE VF. Setting it rebinds
	// the VF's driver, which gives the VF a new netdev.
	GUID net.HardwareAddr
}

// VFConfig is what a pod's VF gets through its PF (api.VFConfig).
type VFConfig = api.VFConfig

// VFLinkState is a VF's administrative link state (api.VFLinkState).
type VFLinkState = api.VFLinkState

// The VF link states and VLAN protocols, as pkg/api names them.
const (
	VFLinkAuto      = api.VFLinkAuto
	VFLinkEnable    = api.VFLinkEnable
	VFLinkDisable   = api.VFLinkDisable
	VLANProto8021Q  = api.VLANProto8021Q
	VLANProto8021AD = api.VLANProto8021AD
)

// netlinkPF is vfpf.Control on RTM_SETLINK/IFLA_VFINFO_LIST in the host netns.
// A PF is looked up by name once per session (index): the reply to that
// lookup carries every VF's IFLA_VF_INFO and their stats, which costs the
// PF driver more than the setting itself, so settings go to the PF's
// index; only VFState reads the PF again, for the VFs' state as it is now.
type netlinkPF struct {
	h     netlinksafe.Handle
	index map[string]int // PF netdev name → ifindex, from this session's lookups (nil: none kept)
}

func (p netlinkPF) link(pf string) (netlink.Link, error) {
	l, err := p.h.LinkByName(pf)
	if err != nil {
		return nil, fmt.Errorf("PF %s not found in the host netns (a PF moved into a pod cannot serve vf mode): %w", pf, err)
	}
	if p.index != nil {
		p.index[pf] = l.Attrs().Index
	}
	return l, nil
}

func (p netlinkPF) VFState(pf string, vf int) (vfpf.State, error) {
	l, err := p.link(pf)
	if err != nil {
		return vfpf.State{}, err
	}
	for _, info := range l.Attrs().Vfs {
		if info.ID != vf {
			continue
		}
		proto := uint16(info.VlanProto)
		if proto == 0 {
			proto = VLANProto8021Q
		}
		st := vfpf.State{MAC: info.Mac, VLAN: info.Vlan, QoS: info.Qos, VLANProto: proto, Spoofchk: info.Spoofchk,
			Trust: info.Trust != 0, LinkState: VFLinkState(info.LinkState), MinTxRate: info.MinTxRate,
			MaxTxRate: info.MaxTxRate}
		if l.Attrs().EncapType == "infiniband" {
			guids, err := readVFGUIDs(l.Attrs().Index)
			if err != nil {
				return vfpf.State{}, fmt.Errorf("read the GUIDs of VF %d of PF %s: %w", vf, pf, err)
			}
			st.NodeGUID, st.PortGUID = guids[vf].Node, guids[vf].Port
		}
		return st, nil
	}
	return vfpf.State{}, fmt.Errorf("VF %d of PF %s: %w (%d VFs reported)", vf, pf, vfpf.ErrNotOnPF, len(l.Attrs().Vfs))
}

// set runs one setting on the PF's link, by its index once this session
// has looked the PF up.
func (p netlinkPF) set(pf string, do func(netlink.Link) error) error {
	if index, ok := p.index[pf]; ok {
		return do(&netlink.Device{LinkAttrs: netlink.LinkAttrs{Name: pf, Index: index}})
	}
	l, err := p.link(pf)
	if err != nil {
		return err
	}
	return do(l)
}

func (p netlinkPF) SetVFMAC(pf string, vf int, mac net.HardwareAddr) error {
	return p.set(pf, func(l netlink.Link) error { return p.h.LinkSetVfHardwareAddr(l, vf, mac) })
}

func (p netlinkPF) SetVFVLAN(pf string, vf, vlan, qos int, proto uint16) error {
	return p.set(pf, func(l netlink.Link) error { return p.h.LinkSetVfVlanQosProto(l, vf, vlan, qos, int(proto)) })
}

func (p netlinkPF) SetVFSpoofchk(pf string, vf int, on bool) error {
	return p.set(pf, func(l netlink.Link) error { return p.h.LinkSetVfSpoofchk(l, vf, on) })
}

func (p netlinkPF) SetVFTrust(pf string, vf int, on bool) error {
	return p.set(pf, func(l netlink.Link) error { return p.h.LinkSetVfTrust(l, vf, on) })
}

func (p netlinkPF) SetVFLinkState(pf string, vf int, state VFLinkState) error {
	return p.set(pf, func(l netlink.Link) error { return p.h.LinkSetVfState(l, vf, uint32(state)) })
}

func (p netlinkPF) SetVFGUID(pf string, vf int, node, port net.HardwareAddr) error {
	return p.set(pf, func(l netlink.Link) error {
		if err := p.h.LinkSetVfGUID(l, vf, node, nl.IFLA_VF_IB_NODE_GUID); err != nil {
			return fmt.Errorf("node GUID: %w", err)
		}
		if err := p.h.LinkSetVfGUID(l, vf, port, nl.IFLA_VF_IB_PORT_GUID); err != nil {
			return fmt.Errorf("port GUID: %w", err)
		}
		return nil
	})
}

func (p netlinkPF) SetVFRate(pf string, vf int, minMbps, maxMbps uint32) error {
	return p.set(pf, func(l netlink.Link) error { return p.h.LinkSetVfRate(l, vf, int(minMbps), int(maxMbps)) })
}
