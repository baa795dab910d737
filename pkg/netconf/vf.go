package netconf

import (
	"math"
	"net"
	"strings"

	"github.com/railcni/rail/pkg/api"
)

// VFKeys are the netconf keys of vf mode, named and valued as sriov-cni
// names them, so a NAD moves over by changing "type" (and adding
// "mode":"vf"). A key left out leaves that setting of the VF as it is.
type VFKeys struct {
	VLAN      *int   `json:"vlan,omitempty"`
	VLANQoS   *int   `json:"vlanQoS,omitempty"`
	VLANProto string `json:"vlanProto,omitempty"` // 802.1q (default) or 802.1ad
	MAC       string `json:"mac,omitempty"`
	Spoofchk  string `json:"spoofchk,omitempty"`   // on, off
	Trust     string `json:"trust,omitempty"`      // on, off
	LinkState string `json:"link_state,omitempty"` // auto, enable, disable
	MinTxRate *int64 `json:"min_tx_rate,omitempty"`
	MaxTxRate *int64 `json:"max_tx_rate,omitempty"` // Mbps
}

// vfKeyNames lists them for error messages.
const vfKeyNames = "vlan, vlanQoS, vlanProto, mac, spoofchk, trust, link_state, min_tx_rate, max_tx_rate"

// VFConfig is what the netconf asks of the VF, with runtimeConfig's mac
// (the "mac" capability) over the netconf's. Valid after LoadRail.
func (c *Rail) VFConfig() api.VFConfig { return c.vfConfig }

// checkVF parses the vf-mode keys into c.vfConfig; a key given in another
// mode, or a value out of range, names the key and the fix.
func (c *Rail) checkVF() error {
	k := c.VFKeys
	mac := k.MAC
	if c.RuntimeConfig != nil && c.RuntimeConfig.MAC != "" {
		mac = c.RuntimeConfig.MAC
	}
	if c.Mode != api.ModeVF {
		if k != (VFKeys{}) || mac != "" {
			return fieldError(firstVFKey(k, mac), "is a vf mode key (%s): set \"mode\":\"vf\", or remove it", vfKeyNames)
		}
		return nil
	}
	var cfg api.VFConfig
	if mac != "" {
		hw, err := net.ParseMAC(mac)
		if err != nil {
			return fieldError("mac", "%q is not a MAC address: use six bytes like 02:00:00:00:00:01", mac)
		}
		cfg.MAC = hw
	}
	cfg.VLAN = k.VLAN
	if k.VLANQoS != nil {
		cfg.QoS = *k.VLANQoS
	}
	switch strings.ToLower(k.VLANProto) {
	case "":
	case "802.1q":
		cfg.VLANProto = api.VLANProto8021Q
	case "802.1ad":
		cfg.VLANProto = api.VLANProto8021AD
	default:
		return fieldError("vlanProto", "%q: use 802.1q or 802.1ad", k.VLANProto)
	}
	var err error
	if cfg.Spoofchk, err = onOff("spoofchk", k.Spoofchk); err != nil {
		return err
	}
	if cfg.Trust, err = onOff("trust", k.Trust); err != nil {
		return err
	}
	if k.LinkState != "" {
		state, ok := map[string]api.VFLinkState{"auto": api.VFLinkAuto, "enable": api.VFLinkEnable, "disable": api.VFLinkDisable}[k.LinkState]
		if !ok {
			return fieldError("link_state", "%q: use auto, enable or disable", k.LinkState)
		}
		cfg.LinkState = &state
	}
	if cfg.MinTxRate, err = rate("min_tx_rate", k.MinTxRate); err != nil {
		return err
	}
	if cfg.MaxTxRate, err = rate("max_tx_rate", k.MaxTxRate); err != nil {
		return err
	}
	if err := cfg.Validate(); err != nil {
		key, _, _ := strings.Cut(err.Error(), " ")
		return fieldError(key, "%s", err)
	}
	c.vfConfig = cfg
	return nil
}

func onOff(key, v string) (*bool, error) {
	switch v {
	case "":
		return nil, nil
	case "on", "off":
		on := v == "on"
		return &on, nil
	}
	return nil, fieldError(key, "%q: use on or off", v)
}

func rate(key string, v *int64) (*uint32, error) {
	if v == nil {
		return nil, nil
	}
	if *v < 0 || *v > math.MaxUint32 {
		return nil, fieldError(key, "%d is out of range: a rate in Mbps from 0 (no limit) to %d", *v, uint32(math.MaxUint32))
	}
	r := uint32(*v)
	return &r, nil
}

// firstVFKey names the first vf-mode key given, for the error of a
// netconf that gives one in another mode.
func firstVFKey(k VFKeys, mac string) string {
	for _, f := range []struct {
		key string
		set bool
	}{{"vlan", k.VLAN != nil}, {"vlanQoS", k.VLANQoS != nil}, {"vlanProto", k.VLANProto != ""}, {"mac", mac != ""},
		{"spoofchk", k.Spoofchk != ""}, {"trust", k.Trust != ""}, {"link_state", k.LinkState != ""},
		{"min_tx_rate", k.MinTxRate != nil}, {"max_tx_rate", k.MaxTxRate != nil}} {
		if f.set {
			return f.key
		}
	}
	return ""
}
