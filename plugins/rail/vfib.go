package main

import (
	"fmt"
	"net"

	"github.com/containernetworking/cni/pkg/types"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/attach"
	"github.com/railcni/rail/pkg/netconf"
	"github.com/railcni/rail/pkg/topology"
)

// ibVFSpec is vfSpec for a VF of an InfiniBand PF: its node and port GUID
// (the runtime's infinibandGUID, else the lease's) and link_state. The
// PF's IPoIB driver has no MAC, VLAN, spoofchk, trust or rate for its VFs,
// so a netconf that asks for one is refused rather than half applied. For
// a RoCE VF it is nil, or a refusal of a GUID given for it.
func ibVFSpec(conf *netconf.Rail, iface api.PlanInterface) (*attach.VF, error) {
	vf, guid := iface.VF, conf.InfinibandGUID()
	if iface.NIC == nil || iface.NIC.LinkLayer != topology.InfiniBand {
		if guid == nil {
			return nil, nil
		}
		return nil, types.NewError(types.ErrInvalidNetworkConfig, "invalid netconf field \"infinibandGUID\"",
			fmt.Sprintf("VF %s of PF %s is %s (RoCE), and a GUID is for InfiniBand VFs: drop the infinibandGUID capability, or select InfiniBand NICs (\"linkLayer\": \"InfiniBand\")",
				vf.PCI, vf.PF, linkLayerOf(iface)))
	}
	cfg := conf.VFConfig()
	if key := ethernetOnlyVFKey(cfg); key != "" {
		return nil, types.NewError(types.ErrInvalidNetworkConfig, fmt.Sprintf("invalid netconf field %q", key),
			fmt.Sprintf("VF %s of PF %s is InfiniBand, and %s is an Ethernet setting its PF cannot apply to an IPoIB VF "+
				"(partitions on the subnet manager take the place of VLANs): remove it, or select RoCE NICs (\"linkLayer\": \"Ethernet\")",
				vf.PCI, vf.PF, key))
	}
	if guid == nil {
		lease, err := net.ParseMAC(vf.GUID)
		if err != nil || api.CheckGUID(lease) != nil {
			return nil, types.NewError(types.ErrInternal, "raild's plan gives InfiniBand VF "+vf.PCI+" no GUID",
				fmt.Sprintf("guid %q: raild is older than this plugin: update raild", vf.GUID))
		}
		guid = lease
	}
	return &attach.VF{PF: vf.PF, Index: vf.Index, Config: cfg, GUID: guid}, nil
}

// oneGUIDPerVF refuses one runtime GUID for an attachment of several VFs.
func oneGUIDPerVF(conf *netconf.Rail, plan *api.Plan) error {
	if planMode(conf, plan) != api.ModeVF || conf.InfinibandGUID() == nil || len(plan.Interfaces) < 2 {
		return nil
	}
	return types.NewError(types.ErrInvalidNetworkConfig, "invalid netconf field \"infinibandGUID\"",
		fmt.Sprintf("infinibandGUID %s names one GUID, but this attachment gets %d VFs and no two VFs may share a GUID: set \"maxNICs\": 1, or leave the capability out (each VF then gets its lease's own)",
			conf.InfinibandGUID(), len(plan.Interfaces)))
}

// ethernetOnlyVFKey names the first setting cfg asks that only an
// Ethernet VF takes ("" none).
func ethernetOnlyVFKey(cfg api.VFConfig) string {
	for _, k := range []struct {
		key string
		set bool
	}{{"mac", cfg.MAC != nil}, {"vlan", cfg.VLAN != nil}, {"vlanQoS", cfg.QoS != 0}, {"vlanProto", cfg.VLANProto != 0},
		{"spoofchk", cfg.Spoofchk != nil}, {"trust", cfg.Trust != nil}, {"min_tx_rate", cfg.MinTxRate != nil},
		{"max_tx_rate", cfg.MaxTxRate != nil}} {
		if k.set {
			return k.key
		}
	}
	return ""
}

// linkLayerOf names the link layer of a planned interface's NIC.
func linkLayerOf(iface api.PlanInterface) string {
	if iface.NIC == nil || iface.NIC.LinkLayer == "" {
		return "not InfiniBand"
	}
	return string(iface.NIC.LinkLayer)
}
