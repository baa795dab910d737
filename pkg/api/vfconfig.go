package api

import (
	"fmt"
	"net"
)

// VFLinkState is a VF's administrative link state (IFLA_VF_LINK_STATE).
type VFLinkState uint32

// The VF link states, as the kernel numbers them.
const (
	VFLinkAuto    VFLinkState = 0 // follows the PF's link
	VFLinkEnable  VFLinkState = 1
	VFLinkDisable VFLinkState = 2
)

func (s VFLinkState) String() string {
	switch s {
	case VFLinkAuto:
		return "auto"
	case VFLinkEnable:
		return "enable"
	case VFLinkDisable:
		return "disable"
	}
	return fmt.Sprintf("%d", uint32(s))
}

// VLAN protocols of VFConfig.VLANProto.
const (
	VLANProto8021Q  uint16 = 0x8100
	VLANProto8021AD uint16 = 0x88a8
)

// VFConfig is what a pod's VF gets through its PF in vf mode. A nil field
// is left as the VF has it and never asked of the PF's driver, so a
// setting a driver does not support (igb has no link state and no
// min_tx_rate) fails an ADD only when it was asked for.
type VFConfig struct {
	// MAC is the VF's administrative MAC; the VF's netdev gets it too
	// before it moves (a VF driver takes a PF-set MAC only at its next
	// reset, and a trusted VF brought up with its old MAC would replace it).
	MAC net.HardwareAddr
	// VLAN (0 clears it), with QoS (0-7) and VLANProto (0 means 802.1Q).
	VLAN      *int
	QoS       int
	VLANProto uint16
	Spoofchk  *bool
	Trust     *bool
	LinkState *VFLinkState
	// MinTxRate and MaxTxRate are in Mbps; 0 is no limit. One set alone
	// keeps the VF's other one.
	MinTxRate *uint32
	MaxTxRate *uint32
}

// Validate checks what a VFConfig asks, naming the netconf key (as
// sriov-cni names it) and the fix.
func (c VFConfig) Validate() error {
	if c.MAC != nil {
		if len(c.MAC) != 6 || c.MAC[0]&1 != 0 || isZero(c.MAC) {
			return fmt.Errorf("mac %q is not a unicast Ethernet MAC: use six bytes like 02:00:00:00:00:01 (not multicast, not zero)", c.MAC)
		}
	}
	if c.VLAN != nil && (*c.VLAN < 0 || *c.VLAN > 4094) {
		return fmt.Errorf("vlan %d is out of range: use 0 (none) to 4094", *c.VLAN)
	}
	if c.QoS < 0 || c.QoS > 7 {
		return fmt.Errorf("vlanQoS %d is out of range: use 0-7", c.QoS)
	}
	if c.QoS != 0 && (c.VLAN == nil || *c.VLAN == 0) {
		return fmt.Errorf("vlanQoS %d needs a vlan: set vlan to 1-4094, or drop vlanQoS", c.QoS)
	}
	switch c.VLANProto {
	case 0, VLANProto8021Q:
	case VLANProto8021AD:
		if c.VLAN == nil || *c.VLAN == 0 {
			return fmt.Errorf("vlanProto 802.1ad needs a vlan: set vlan to 1-4094, or drop vlanProto")
		}
	default:
		return fmt.Errorf("vlanProto %#04x is unknown: use 802.1q or 802.1ad", c.VLANProto)
	}
	if c.LinkState != nil && *c.LinkState > VFLinkDisable {
		return fmt.Errorf("link_state %d is unknown: use auto, enable or disable", uint32(*c.LinkState))
	}
	if c.MinTxRate != nil && c.MaxTxRate != nil && *c.MaxTxRate != 0 && *c.MinTxRate > *c.MaxTxRate {
		return fmt.Errorf("min_tx_rate %d is above max_tx_rate %d (Mbps): lower min_tx_rate, or set max_tx_rate to 0 for no limit",
			*c.MinTxRate, *c.MaxTxRate)
	}
	return nil
}

func isZero(b []byte) bool {
	for _, x := range b {
		if x != 0 {
			return false
		}
	}
	return true
}
