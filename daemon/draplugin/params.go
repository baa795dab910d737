package draplugin

import (
	"fmt"
	"slices"
	"strings"

	resourcev1 "k8s.io/api/resource/v1"

	"github.com/railcni/rail/pkg/api"
)

// Params are a claim's opaque parameters for Rail's driver (a DeviceClass
// or the claim's spec.devices.config[].opaque.parameters): the attach
// mode, the address pool, and in vf mode the VF keys (vlan, vlanQoS,
// vlanProto, mac, spoofchk, trust, link_state, min_tx_rate, max_tx_rate).
type Params struct {
	Mode api.Mode `json:"mode,omitempty"`
	Pool string   `json:"pool,omitempty"`
	api.VFKeys
}

// requestParams are the parameters of one request: every opaque config
// for Rail's driver that applies to it (no request list, or one naming
// it or its parent request), class configs first, so the claim's own keys
// win key by key. An error names the config entry and the key.
func requestParams(driver string, configs []resourcev1.DeviceAllocationConfiguration, request string) (Params, error) {
	var out Params
	parent, _, _ := strings.Cut(request, "/")
	ordered := slices.Clone(configs)
	slices.SortStableFunc(ordered, func(a, b resourcev1.DeviceAllocationConfiguration) int {
		return sourceRank(a.Source) - sourceRank(b.Source)
	})
	for i, c := range ordered {
		if c.Opaque == nil || c.Opaque.Driver != driver {
			continue
		}
		if len(c.Requests) > 0 && !slices.Contains(c.Requests, request) && !slices.Contains(c.Requests, parent) {
			continue
		}
		var p Params
		if err := api.DecodeStrict(c.Opaque.Parameters.Raw, &p); err != nil {
			return Params{}, fmt.Errorf("config[%d] (%s) opaque.parameters: %w (keys: mode, pool, %s)", i, c.Source, err, api.VFKeyNames)
		}
		out = p.over(out)
	}
	return out, nil
}

func sourceRank(s resourcev1.AllocationConfigSource) int {
	if s == resourcev1.AllocationConfigSourceClass {
		return 0
	}
	return 1
}

// over lays p's keys over base.
func (p Params) over(base Params) Params {
	if p.Mode != "" {
		base.Mode = p.Mode
	}
	if p.Pool != "" {
		base.Pool = p.Pool
	}
	k, b := p.VFKeys, &base.VFKeys
	if k.VLAN != nil {
		b.VLAN, b.VLANQoS, b.VLANProto = k.VLAN, k.VLANQoS, k.VLANProto
	}
	for _, s := range []struct{ from, to *string }{{&k.MAC, &b.MAC}, {&k.Spoofchk, &b.Spoofchk}, {&k.Trust, &b.Trust}, {&k.LinkState, &b.LinkState}} {
		if *s.from != "" {
			*s.to = *s.from
		}
	}
	if k.MinTxRate != nil {
		b.MinTxRate = k.MinTxRate
	}
	if k.MaxTxRate != nil {
		b.MaxTxRate = k.MaxTxRate
	}
	return base
}

// check validates the parameters against the device they go with and
// the node's pools, filling in the mode (the device's first when none is
// asked). Errors name the key.
func (p Params) check(e Entry, pools []string) (Params, error) {
	switch {
	case p.Mode == "":
		p.Mode = e.Modes[0]
	case !slices.Contains(e.Modes, p.Mode):
		return p, fmt.Errorf("parameters.mode %q: device %s (%s) serves %s", p.Mode, e.Device, e.Kind, api.ModeList(e.Modes))
	}
	if p.Pool != "" && !slices.Contains(pools, p.Pool) {
		return p, fmt.Errorf("parameters.pool %q: no such pool on this node (pools: %s)", p.Pool, strings.Join(pools, ", "))
	}
	if p.VFKeys.First() != "" && p.Mode != api.ModeVF {
		return p, fmt.Errorf("parameters.%s: VF keys are for vf mode, and device %s is given in %s mode", p.VFKeys.First(), e.Device, p.Mode)
	}
	if _, err := p.VFKeys.Config(); err != nil {
		return p, fmt.Errorf("parameters.%w", err)
	}
	return p, nil
}
