package main

import (
	"fmt"
	"net"

	"github.com/containernetworking/cni/pkg/types"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/attach"
)

// ibVFSpec is vfSpec for a VF of an InfiniBand PF: its node and port GUID
// (the runtime's infinibandGUID, else the lease's) and link_state. The
// PF's IPoIB driver has no MAC, VLAN, spoofchk, trust or rate for its VFs,
// so a netconf that asks for one is refused rather than half applied.
func ibVFSpec(cfg api.VFConfig, vf *api.VF) (*attach.VF, error) {
	if key := ethernetOnlyVFKey(cfg); key != "" {
		return nil, types.NewError(types.ErrInvalidNetworkConfig, fmt.Sprintf("invalid netconf field %q", key),
			fmt.Sprintf("VF %s of PF %s is InfiniBand, and %s is an Ethernet setting its PF cannot apply to an IPoIB VF "+
				"(partitions on the subnet manager take the place of VLANs): remove it, or select RoCE NICs (\"linkLayer\": \"Ethernet\")",
				vf.PCI, vf.PF, key))
	}
	if cfg.GUID == nil {
		guid, err := net.ParseMAC(vf.GUID)
		if err != nil || api.CheckGUID(guid) != nil {
			return nil, types.NewError(types.ErrInternal, "raild's plan gives InfiniBand VF "+vf.PCI+" no GUID",
				fmt.Sprintf("guid %q: raild is older than this plugin: update raild", vf.GUID))
		}
		cfg.GUID = guid
	}
	return &attach.VF{PF: vf.PF, Index: vf.Index, Config: cfg}, nil
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
