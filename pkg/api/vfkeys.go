package api

import (
	"fmt"
	"math"
	"net"
	"strings"
)

// VFKeys are vf mode's settings of a VF as a netconf (and, but for MAC, a
// pool) spells them: sriov-cni's keys with sriov-cni's values, so a NAD
// moves over by changing "type". A key left out leaves that setting of
// the VF as it is.
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

// VFKeyNames lists the keys of VFKeys, for error messages.
const VFKeyNames = "vlan, vlanQoS, vlanProto, mac, spoofchk, trust, link_state, min_tx_rate, max_tx_rate"

// Config parses the keys into what they ask of the VF. An error starts
// with the key's name (as VFConfig.Validate's do), so a caller can name
// where the key sits: a netconf field, pools[i].<key>.
func (k VFKeys) Config() (VFConfig, error) {
	var cfg VFConfig
	if k.MAC != "" {
		hw, err := net.ParseMAC(k.MAC)
		if err != nil {
			return cfg, fmt.Errorf("mac %q is not a MAC address: use six bytes like 02:00:00:00:00:01", Excerpt(k.MAC, 64))
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
		cfg.VLANProto = VLANProto8021Q
	case "802.1ad":
		cfg.VLANProto = VLANProto8021AD
	default:
		return cfg, fmt.Errorf("vlanProto %q: use 802.1q or 802.1ad", Excerpt(k.VLANProto, 64))
	}
	var err error
	if cfg.Spoofchk, err = onOff("spoofchk", k.Spoofchk); err != nil {
		return cfg, err
	}
	if cfg.Trust, err = onOff("trust", k.Trust); err != nil {
		return cfg, err
	}
	if k.LinkState != "" {
		state, ok := map[string]VFLinkState{"auto": VFLinkAuto, "enable": VFLinkEnable, "disable": VFLinkDisable}[k.LinkState]
		if !ok {
			return cfg, fmt.Errorf("link_state %q: use auto, enable or disable", Excerpt(k.LinkState, 64))
		}
		cfg.LinkState = &state
	}
	if cfg.MinTxRate, err = rate("min_tx_rate", k.MinTxRate); err != nil {
		return cfg, err
	}
	if cfg.MaxTxRate, err = rate("max_tx_rate", k.MaxTxRate); err != nil {
		return cfg, err
	}
	return cfg, cfg.Validate()
}

// First names the first key given ("" none), for the error of keys given
// where they do not apply.
func (k VFKeys) First() string {
	for _, f := range []struct {
		key string
		set bool
	}{{"vlan", k.VLAN != nil}, {"vlanQoS", k.VLANQoS != nil}, {"vlanProto", k.VLANProto != ""}, {"mac", k.MAC != ""},
		{"spoofchk", k.Spoofchk != ""}, {"trust", k.Trust != ""}, {"link_state", k.LinkState != ""},
		{"min_tx_rate", k.MinTxRate != nil}, {"max_tx_rate", k.MaxTxRate != nil}} {
		if f.set {
			return f.key
		}
	}
	return ""
}

// KeyOf is the key an error of Config or VFConfig.Validate names.
func KeyOf(err error) string {
	key, _, _ := strings.Cut(err.Error(), " ")
	return key
}

func onOff(key, v string) (*bool, error) {
	switch v {
	case "":
		return nil, nil
	case "on", "off":
		on := v == "on"
		return &on, nil
	}
	return nil, fmt.Errorf("%s %q: use on or off", key, Excerpt(v, 64))
}

func rate(key string, v *int64) (*uint32, error) {
	if v == nil {
		return nil, nil
	}
	if *v < 0 || *v > math.MaxUint32 {
		return nil, fmt.Errorf("%s %d is out of range: a rate in Mbps from 0 (no limit) to %d", key, *v, uint32(math.MaxUint32))
	}
	r := uint32(*v)
	return &r, nil
}
