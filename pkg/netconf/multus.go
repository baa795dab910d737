package netconf

import (
	"strings"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/topology"
)

// Keys Multus (v4.2.2, pkg/types/conf.go) writes into a delegate's netconf
// besides what the NetworkAttachmentDefinition says:
//   - "deviceID" and "pciBusID", both set to the same value, when the NAD is
//     annotated k8s.v1.cni.cncf.io/resourceName and the kubelet allocated
//     the pod a device of that resource (delegateAddDeviceID): the ID the
//     device plugin reported for it;
//   - "args": {"cni": {...}}, the pod's cni-args (read by Rail.CNIArgs);
//   - "runtimeConfig" (through libcni, only for capabilities the NAD
//     declares): of Multus' capability args rail takes "deviceID" (the
//     same device, also from the pod's network selection element) and
//     "CNIDeviceInfoFile" (where a plugin may publish device info; rail
//     writes none: its result names the NIC).
//   - "name", the NAD's name, when the config has none (the NAD client's
//     GetCNIConfigFromSpec); for conflists libcni also copies the list's
//     "name" and "cniVersion" into each plugin. Both are PluginConf's own.
// Multus re-marshals a config it adds keys to (keys sorted). Any other key
// stays refused.

// MultusDevice is what Multus passes about a device-plugin device.
type MultusDevice struct {
	DeviceID string `json:"deviceID,omitempty"`
	PCIBusID string `json:"pciBusID,omitempty"`
}

// Device returns the device-plugin device ID Multus passed, "" for none:
// the top-level deviceID wins over runtimeConfig's, as in Multus, where
// the resource's allocation wins over the pod's request.
func (c *Rail) Device() string {
	if c.DeviceID != "" {
		return c.DeviceID
	}
	if c.PCIBusID != "" {
		return c.PCIBusID
	}
	if c.RuntimeConfig != nil {
		return c.RuntimeConfig.DeviceID
	}
	return ""
}

// DeviceNIC returns the PCI address of the device Multus passed, in full
// lower-case form, or "" when there is none or it is not a PCI address.
// A PCI device ID (an SR-IOV VF, a whole NIC) is the NIC the kubelet gave
// the pod: rail attaches that one. Other IDs — rail's own device plugin
// hands out shares such as "rdma-3", GPU plugins UUIDs — name no NIC and
// are ignored: the placement chooses the NIC.
func (c *Rail) DeviceNIC() string {
	return topology.NormalizePCI(c.Device())
}

// Selector is the NIC selector of this attachment: the netconf's nics,
// rail and linkLayer, and the PCI device Multus passed (which chooses the
// NIC or VF: the netconf may not name nics beside it, checkDevice).
func (c *Rail) Selector() api.Selector {
	return api.Selector{NICs: c.NICs, Device: c.DeviceNIC(), Rail: c.Rail, LinkLayer: c.LinkLayer}
}

// checkDevice refuses device keys that disagree, and a PCI device beside
// the netconf's own nics: both would choose the NIC.
func (c *Rail) checkDevice() error {
	if c.DeviceID != "" && c.PCIBusID != "" && !strings.EqualFold(c.DeviceID, c.PCIBusID) {
		return fieldError("pciBusID", "%q differs from deviceID %q: Multus writes both with the device-plugin device; remove them from the NAD's config",
			c.PCIBusID, c.DeviceID)
	}
	if nic := c.DeviceNIC(); nic != "" && len(c.NICs) > 0 {
		return fieldError("nics", "the NAD's resourceName gave the pod the device %s, which chooses the NIC: remove \"nics\" from the NAD, or its resourceName annotation", nic)
	}
	return nil
}
