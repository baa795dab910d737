package podinfo

import (
	"errors"
	"fmt"

	podresourcesapi "k8s.io/kubelet/pkg/apis/podresources/v1"
)

// Bounds on what raild reads of one kubelet answer. No node has more than a
// few dozen GPUs (MIG slices and shared replicas included, a few hundred),
// so an answer beyond them is a broken or hostile device plugin: it is
// refused whole, never truncated (a pod placed on part of its GPUs would be
// placed wrong), and never kept.
const (
	// MaxDevicesPerContainer bounds the device IDs of the asked resources
	// plus the DRA devices of one container.
	MaxDevicesPerContainer = 256
	// MaxDevicesPerPod bounds the same over all of a pod's containers.
	MaxDevicesPerPod = 1024
	// maxGetSize bounds the kubelet's answer for one pod (Get): far above
	// any real pod's, far below what would hold raild's memory.
	maxGetSize = 4 << 20
)

// ErrTooManyDevices: the kubelet reports more devices for a pod than any
// node has GPUs; the answer is not used.
var ErrTooManyDevices = errors.New("more devices than any node has GPUs")

// checkBounds counts, without keeping anything, the devices podDevices
// would collect, and refuses a pod beyond the bounds, naming it and the
// container.
func checkBounds(pod *podresourcesapi.PodResources, resources []string) error {
	wanted := make(map[string]bool, len(resources))
	for _, resource := range resources {
		wanted[resource] = true
	}
	total := 0
	for _, container := range pod.GetContainers() {
		n := containerDeviceCount(container, wanted)
		total += n
		if n > MaxDevicesPerContainer {
			return fmt.Errorf("pod %s/%s container %q: the kubelet reports %d devices of %v and DRA claims, raild reads at most %d per container: %w; check the device plugin or DRA driver that allocated them",
				pod.GetNamespace(), pod.GetName(), container.GetName(), n, resources, MaxDevicesPerContainer, ErrTooManyDevices)
		}
	}
	if total > MaxDevicesPerPod {
		return fmt.Errorf("pod %s/%s: the kubelet reports %d devices of %v and DRA claims over its containers, raild reads at most %d per pod: %w; check the device plugin or DRA driver that allocated them",
			pod.GetNamespace(), pod.GetName(), total, resources, MaxDevicesPerPod, ErrTooManyDevices)
	}
	return nil
}

// containerDeviceCount is the number of device IDs of the wanted
// resources and of DRA devices the kubelet lists for one container.
func containerDeviceCount(container *podresourcesapi.ContainerResources, wanted map[string]bool) int {
	n := 0
	for _, devices := range container.GetDevices() {
		if wanted[devices.GetResourceName()] {
			n += len(devices.GetDeviceIds())
		}
	}
	for _, claim := range container.GetDynamicResources() {
		n += len(claim.GetClaimResources())
	}
	return n
}
