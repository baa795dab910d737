package podinfo

import (
	"errors"

	podresourcesapi "k8s.io/kubelet/pkg/apis/podresources/v1"
)

// DefaultDRADriver is the DRA driver name of NVIDIA's GPU DRA driver.
const DefaultDRADriver = "gpu.nvidia.com"

var (
	// ErrDRANotSynced: the node's ResourceSlices are not known yet; the
	// same lookup may succeed later.
	ErrDRANotSynced = errors.New("ResourceSlices not synced")
	// ErrDRAUnknownDevice: no ResourceSlice of the node lists the device.
	ErrDRAUnknownDevice = errors.New("DRA device not in any ResourceSlice")
)

// DRADevice is one device DRA allocated to a container through a
// ResourceClaim, as the kubelet reports it under dynamic_resources: the
// driver, the ResourceSlice pool and the device's name in that pool.
type DRADevice struct {
	Driver string
	Pool   string
	Device string
	// Claim is the claim the device was allocated for ("namespace/name"),
	// for messages.
	Claim string
}

// String is the device as a DRA triple, driver/pool/device.
func (d DRADevice) String() string { return d.Driver + "/" + d.Pool + "/" + d.Device }

// Devices is what the kubelet says a pod (or one container) holds that may
// be GPUs: the device IDs of the device-plugin resources asked for and
// every DRA device of its claims, each once, in the kubelet's order.
type Devices struct {
	IDs []string
	DRA []DRADevice
}

// Empty tells whether the kubelet reported nothing.
func (d Devices) Empty() bool { return len(d.IDs) == 0 && len(d.DRA) == 0 }

// podDevices collects both kinds over the pod's containers.
func podDevices(pod *podresourcesapi.PodResources, resources []string) Devices {
	return Devices{IDs: deviceIDs(pod, resources), DRA: draDevices(pod)}
}

// draDevices collects the DRA devices of every claim, each once, in order.
// A device shared by several containers (one claim) is one device.
func draDevices(pod *podresourcesapi.PodResources) []DRADevice {
	seen := make(map[DRADevice]bool)
	var out []DRADevice
	for _, container := range pod.GetContainers() {
		for _, claim := range container.GetDynamicResources() {
			name := claim.GetClaimNamespace() + "/" + claim.GetClaimName()
			for _, res := range claim.GetClaimResources() {
				dev := DRADevice{Driver: res.GetDriverName(), Pool: res.GetPoolName(), Device: res.GetDeviceName()}
				if seen[dev] {
					continue
				}
				seen[dev] = true
				dev.Claim = name
				out = append(out, dev)
			}
		}
	}
	return out
}
