package netconf

import (
	"github.com/railcni/rail/pkg/api"
)

// VFKeys are the netconf keys of vf mode, named and valued as sriov-cni
// names them (api.VFKeys; a pool carries the same but mac).
type VFKeys = api.VFKeys

// VFConfig is what the netconf asks of the VF, with runtimeConfig's mac
// (the "mac" capability) over the netconf's. Valid after LoadRail. The
// pool's VF settings, which raild sends with the plan, fill in the keys
// it leaves out (api.VFConfig.Over).
func (c *Rail) VFConfig() api.VFConfig { return c.vfConfig }

// checkVF parses the vf-mode keys into c.vfConfig; a key given in another
// mode, or a value out of range, names the key and the fix.
func (c *Rail) checkVF() error {
	k := c.VFKeys
	if c.RuntimeConfig != nil && c.RuntimeConfig.MAC != "" {
		k.MAC = c.RuntimeConfig.MAC
	}
	if c.Mode != api.ModeVF {
		if key := k.First(); key != "" {
			return fieldError(key, "is a vf mode key (%s): set \"mode\":\"vf\", or remove it", api.VFKeyNames)
		}
		if c.VFPerGPU != nil {
			return fieldError("vfPerGPU", "is a vf mode key (a VF for each GPU even where GPUs share a PF): set \"mode\":\"vf\", or remove it")
		}
		return nil
	}
	cfg, err := k.Config()
	if err != nil {
		return fieldError(api.KeyOf(err), "%s", err)
	}
	c.vfConfig = cfg
	return nil
}
