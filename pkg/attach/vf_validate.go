package attach

import (
	"fmt"
)

// validateVF checks Spec.VF: present exactly in vf mode, and each setting
// in the range the kernel and the 802.1Q standard allow.
func validateVF(s Spec) error {
	switch {
	case s.Mode != ModeVF && s.VF != nil:
		return fmt.Errorf("VF is only for mode %q, not %q: leave it empty", ModeVF, s.Mode)
	case s.Mode != ModeVF:
		return nil
	case s.VF == nil:
		return fmt.Errorf("mode %q needs VF (the VF's PF and index)", ModeVF)
	}
	v := s.VF
	if err := checkIfName(v.PF); err != nil {
		return fmt.Errorf("field VF.PF: %w", err)
	}
	if v.Index < 0 || v.Index > 65535 {
		return fmt.Errorf("field VF.Index %d is out of range: a VF index is 0-65535", v.Index)
	}
	return v.Config.Validate()
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
