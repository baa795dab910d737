package sriov

import (
	"github.com/railcni/rail/ipam"
	"github.com/railcni/rail/pkg/api"
)

// PoolVF parses a pool's VF settings (config pools[i] and RailPools
// alike): nil when the pool sets none. An error starts with the key's
// name (api.KeyOf), for the caller to say where the pool sits.
func PoolVF(p ipam.PoolConfig) (*api.VFConfig, error) {
	v := p.PoolVF
	if v == (ipam.PoolVF{}) {
		return nil, nil
	}
	cfg, err := api.VFKeys{VLAN: v.VLAN, VLANQoS: v.VLANQoS, VLANProto: v.VLANProto, Spoofchk: string(v.Spoofchk), Trust: string(v.Trust),
		LinkState: v.LinkState, MinTxRate: v.MinTxRate, MaxTxRate: v.MaxTxRate}.Config()
	if err != nil {
		return nil, err
	}
	return &cfg, nil
}
