package nri

import (
	"strings"

	"github.com/railcni/rail/daemon/podinfo"
)

// cdiAllDevices is the CDI device name NVIDIA's specs give to every GPU.
const cdiAllDevices = "all"

// cdiGPUs returns the GPUs the runtime injects into a container as CDI
// devices ("nvidia.com/gpu=0", "k8s.device-plugin.nvidia.com/gpu=GPU-…").
// The CRI takes them from the kubelet (device plugins, DRA), never from
// the pod spec, so they say what the container was given. Devices of
// other kinds are ignored; names of a GPU kind that name no GPU of this
// node are returned with why (the node's GPU resolver says).
func (p *Plugin) cdiGPUs(call *hookCall) (gpus []int, unknown []podinfo.Unresolved) {
	affinity := call.node().gpus
	for _, d := range call.ctr.GetCDIDevices() {
		kind, name, ok := strings.Cut(d.GetName(), "=")
		if !ok || !p.cfg.cdiKinds[kind] {
			continue
		}
		if name == cdiAllDevices {
			gpus = appendGPUs(gpus, affinity.all...)
			continue
		}
		found, bad := affinity.resolver.IDs([]string{name})
		gpus = appendGPUs(gpus, found...)
		unknown = append(unknown, bad...)
	}
	return gpus, unknown
}
