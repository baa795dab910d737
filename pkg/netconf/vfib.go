package netconf

import (
	"net"

	"github.com/railcni/rail/pkg/api"
)

// InfinibandGUID is runtimeConfig's infinibandGUID (the capability
// ib-sriov-cni and Multus name so): the node and port GUID of the pod's
// InfiniBand VF in vf mode; nil when the runtime gives none. Valid after
// LoadRail.
func (c *Rail) InfinibandGUID() net.HardwareAddr { return c.infinibandGUID }

// checkIBVF parses runtimeConfig's infinibandGUID (vf mode only), and
// refuses pkey in vf mode: an InfiniBand VF's P_Keys are the subnet
// manager's, which rail cannot set.
func (c *Rail) checkIBVF() error {
	guid := ""
	if c.RuntimeConfig != nil {
		guid = c.RuntimeConfig.InfinibandGUID
	}
	if c.Mode != api.ModeVF {
		if guid != "" {
			return fieldError("infinibandGUID", "is for an InfiniBand VF: set \"mode\":\"vf\", or drop the infinibandGUID capability")
		}
		return nil
	}
	if c.PKey != "" {
		return fieldError("pkey", "%q cannot be applied in mode vf: an InfiniBand VF's P_Keys are the ones the subnet manager "+
			"gives its port GUID (its IPoIB netdev uses the P_Key at index 0), so put the VF's GUID (infinibandGUID, or the "+
			"lease's own) in the partition on the subnet manager and remove pkey; for a P_Key child use mode ipoib", c.PKey)
	}
	if guid == "" {
		return nil
	}
	hw, err := net.ParseMAC(guid)
	if err != nil || len(hw) != 8 {
		return fieldError("infinibandGUID", "%q is not a GUID: use eight bytes like 00:11:22:33:44:55:66:77", guid)
	}
	if err := api.CheckGUID(hw); err != nil {
		return fieldError("infinibandGUID", "%s", err)
	}
	c.infinibandGUID = hw
	return nil
}
